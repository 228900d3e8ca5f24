// Message formatting without allocation (into strings whose capacity was reserved), with
// Python's spellings: repr() of a float ("0.1", "1e-05", "inf") and of a str ('j1').
#pragma once

#include <cmath>
#include <cstdarg>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>

namespace ikstack {
namespace servo_detail {

/// printf-style text appended to out (assigned when `assign`); at most 1023 characters
inline void append_fmt(std::string& out, bool assign, const char* fmt, ...)
    __attribute__((format(printf, 3, 4)));
inline void append_fmt(std::string& out, bool assign, const char* fmt, ...) {
    char buf[1024];
    va_list ap;
    va_start(ap, fmt);
    std::vsnprintf(buf, sizeof(buf), fmt, ap);
    va_end(ap);
    if (assign) out.clear();
    out.append(buf);
}

/// Python's repr(float): the shortest digits that read back exactly, fixed notation for
/// decimal exponents in [-4, 16), else d.ddde+XX
inline void append_repr(std::string& out, double x) {
    if (std::isnan(x)) {
        out.append("nan");
        return;
    }
    if (std::isinf(x)) {
        out.append(x > 0 ? "inf" : "-inf");
        return;
    }
    char buf[64];
    int prec = 1;
    for (; prec <= 17; ++prec) {
        std::snprintf(buf, sizeof(buf), "%.*e", prec - 1, x);
        if (std::strtod(buf, nullptr) == x) break;
    }
    // buf: [-]d[.ddd]e[+-]XX
    const char* p = buf;
    bool neg = false;
    if (*p == '-') {
        neg = true;
        ++p;
    }
    char digits[32];
    int nd = 0;
    for (; *p && *p != 'e'; ++p)
        if (*p != '.') digits[nd++] = *p;
    int exp = std::atoi(p + 1);
    while (nd > 1 && digits[nd - 1] == '0') --nd;
    char res[64];
    int k = 0;
    if (neg) res[k++] = '-';
    if (-4 <= exp && exp < 16) {
        if (exp < 0) {
            res[k++] = '0';
            res[k++] = '.';
            for (int i = 0; i < -exp - 1; ++i) res[k++] = '0';
            for (int i = 0; i < nd; ++i) res[k++] = digits[i];
        } else {
            for (int i = 0; i <= exp; ++i) res[k++] = i < nd ? digits[i] : '0';
            res[k++] = '.';
            if (nd > exp + 1) {
                for (int i = exp + 1; i < nd; ++i) res[k++] = digits[i];
            } else {
                res[k++] = '0';
            }
        }
        res[k] = '\0';
    } else {
        res[k++] = digits[0];
        if (nd > 1) {
            res[k++] = '.';
            for (int i = 1; i < nd; ++i) res[k++] = digits[i];
        }
        std::snprintf(res + k, sizeof(res) - static_cast<size_t>(k), "e%c%02d", exp < 0 ? '-' : '+',
                      exp < 0 ? -exp : exp);
    }
    out.append(res);
}

inline std::string py_repr(double x) {
    std::string s;
    append_repr(s, x);
    return s;
}

/// Python's repr(str) for plain names: single quotes unless the text holds one and no double
inline void append_str_repr(std::string& out, const std::string& s) {
    const bool has_single = s.find('\'') != std::string::npos;
    const bool has_double = s.find('"') != std::string::npos;
    const char quote = has_single && !has_double ? '"' : '\'';
    out.push_back(quote);
    for (char ch : s) {
        if (ch == '\\') {
            out.append("\\\\");
        } else if (ch == quote) {
            out.push_back('\\');
            out.push_back(ch);
        } else if (ch == '\n') {
            out.append("\\n");
        } else if (ch == '\t') {
            out.append("\\t");
        } else {
            out.push_back(ch);
        }
    }
    out.push_back(quote);
}

}  // namespace servo_detail
}  // namespace ikstack
