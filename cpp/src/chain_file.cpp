// The chain description file ("ikstack-chain 1", docs/chain-file.md): reader and writer.
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <sstream>

#include "ikstack/chain.hpp"

namespace ikstack {

namespace {

constexpr int kVersion = 1;
const char* const kTransformFields[12] = {"x",   "y",   "z",   "r00", "r01", "r02",
                                          "r10", "r11", "r12", "r20", "r21", "r22"};

struct Token {
    std::string text;
    size_t start;  // offset in the line
};

struct Line {
    int number;
    std::string raw;
    std::vector<Token> tokens;
};

std::vector<Token> split(const std::string& s) {
    std::vector<Token> out;
    size_t i = 0;
    while (i < s.size()) {
        while (i < s.size() && (s[i] == ' ' || s[i] == '\t' || s[i] == '\r')) ++i;
        if (i >= s.size()) break;
        const size_t b = i;
        while (i < s.size() && !(s[i] == ' ' || s[i] == '\t' || s[i] == '\r')) ++i;
        out.push_back({s.substr(b, i - b), b});
    }
    return out;
}

std::string trim(const std::string& s) {
    size_t b = 0, e = s.size();
    while (b < e && (s[b] == ' ' || s[b] == '\t' || s[b] == '\r')) ++b;
    while (e > b && (s[e - 1] == ' ' || s[e - 1] == '\t' || s[e - 1] == '\r')) --e;
    return s.substr(b, e - b);
}

class Reader {
public:
    explicit Reader(const std::string& origin) : origin_(origin) {}

    [[noreturn]] void fail(const Line& l, const std::string& field, const std::string& what) const {
        throw ChainFileError(origin_, l.number, field, what);
    }

    void need(const Line& l, size_t count, const std::string& what) const {
        if (l.tokens.size() < count)
            fail(l, "", "'" + l.tokens[0].text + "' needs " + std::to_string(count - 1) +
                            " values (" + what + "); got " + std::to_string(l.tokens.size() - 1));
    }

    double number(const Line& l, size_t k, const std::string& field, const std::string& who) const {
        if (k >= l.tokens.size()) fail(l, field, who + "missing value");
        const std::string& t = l.tokens[k].text;
        errno = 0;
        char* end = nullptr;
        const double v = std::strtod(t.c_str(), &end);
        if (end == t.c_str() || *end != '\0')
            fail(l, field, who + "expected a number, got '" + t + "'");
        if (std::isnan(v)) fail(l, field, who + "NaN is not allowed");
        if (errno == ERANGE && std::isinf(v))
            fail(l, field, who + "'" + t + "' is out of range");
        return v;
    }

    double finite(const Line& l, size_t k, const std::string& field, const std::string& who) const {
        const double v = number(l, k, field, who);
        if (!std::isfinite(v)) fail(l, field, who + "must be finite, got '" + l.tokens[k].text + "'");
        return v;
    }

    bool flag(const Line& l, size_t k, const std::string& field, const std::string& who) const {
        const std::string& t = l.tokens[k].text;
        if (t == "1") return true;
        if (t == "0") return false;
        fail(l, field, who + "expected 0 or 1, got '" + t + "'");
    }

    int index(const Line& l, size_t k, const std::string& field, const std::string& who,
              int dof) const {
        const std::string& t = l.tokens[k].text;
        char* end = nullptr;
        errno = 0;
        const long v = std::strtol(t.c_str(), &end, 10);
        if (end == t.c_str() || *end != '\0' || errno == ERANGE)
            fail(l, field, who + "expected a joint index, got '" + t + "'");
        if (v < 0 || v >= dof)
            fail(l, field, who + "joint index " + t + " does not exist; the chain has " +
                               std::to_string(dof) + " joints");
        return static_cast<int>(v);
    }

    // x y z r00..r22 from token k on; checks the rotation is one
    Mat4 transform(const Line& l, size_t k, const std::string& prefix, const std::string& who) const {
        Mat4 T;
        for (int f = 0; f < 12; ++f) {
            const double v = finite(l, k + static_cast<size_t>(f), prefix + kTransformFields[f], who);
            if (f < 3)
                T.m[f][3] = v;
            else
                T.m[(f - 3) / 3][(f - 3) % 3] = v;
        }
        double worst = 0.0;
        for (int a = 0; a < 3; ++a)
            for (int b = 0; b < 3; ++b) {
                double d = T.m[0][a] * T.m[0][b] + T.m[1][a] * T.m[1][b] + T.m[2][a] * T.m[2][b];
                if (a == b) d -= 1.0;
                worst = std::max(worst, std::abs(d));
            }
        const double det = T.m[0][0] * (T.m[1][1] * T.m[2][2] - T.m[1][2] * T.m[2][1]) -
                           T.m[0][1] * (T.m[1][0] * T.m[2][2] - T.m[1][2] * T.m[2][0]) +
                           T.m[0][2] * (T.m[1][0] * T.m[2][1] - T.m[1][1] * T.m[2][0]);
        if (worst > 1e-6 || det < 0)
            fail(l, prefix + "r00", who + "the rotation r00..r22 is not orthonormal with "
                                          "determinant +1 (within 1e-6)");
        return T;
    }

    std::string rest(const Line& l, size_t k) const {
        if (k >= l.tokens.size()) return "";
        return trim(l.raw.substr(l.tokens[k].start));
    }

    Chain read(const std::string& text) {
        std::vector<Line> lines;
        {
            std::istringstream in(text);
            std::string raw;
            int no = 0;
            while (std::getline(in, raw)) {
                ++no;
                Line l{no, raw, split(raw)};
                if (l.tokens.empty() || l.tokens[0].text[0] == '#') continue;
                lines.push_back(std::move(l));
            }
            last_line_ = no;
        }
        if (lines.empty()) throw ChainFileError(origin_, 1, "", "empty file; expected 'ikstack-chain 1'");
        const Line& head = lines[0];
        if (head.tokens[0].text != "ikstack-chain")
            fail(head, "header", "expected 'ikstack-chain " + std::to_string(kVersion) +
                                     "' as the first line, got '" + trim(head.raw) + "'");
        if (head.tokens.size() != 2) fail(head, "version", "expected 'ikstack-chain <version>'");
        if (head.tokens[1].text != std::to_string(kVersion))
            fail(head, "version", "unsupported version '" + head.tokens[1].text +
                                      "'; this reader knows version " + std::to_string(kVersion));
        // joints first: constraint rows need the joint count
        int dof = 0;
        for (size_t i = 1; i < lines.size(); ++i)
            if (lines[i].tokens[0].text == "joint") ++dof;
        std::vector<Joint> joints;
        ChainInfo info;
        Mat4 tip_T, tcp_T;
        bool have_tip_T = false, have_tcp = false;
        std::vector<LinearConstraint> linear;
        std::vector<QuadrantConstraint> quadrant;
        std::vector<std::string> seen;
        auto once = [&](const Line& l) {
            const std::string& key = l.tokens[0].text;
            for (const std::string& s : seen)
                if (s == key) fail(l, key, "'" + key + "' given twice");
            seen.push_back(key);
        };
        for (size_t i = 1; i < lines.size(); ++i) {
            const Line& l = lines[i];
            const std::string& key = l.tokens[0].text;
            if (key == "name" || key == "source") {
                once(l);
                (key == "name" ? info.name : info.source) = rest(l, 1);
            } else if (key == "note") {
                info.notes.push_back(rest(l, 1));
            } else if (key == "base" || key == "tip" || key == "role") {
                once(l);
                if (l.tokens.size() != 2) fail(l, key, "'" + key + "' takes one name");
                const std::string& v = l.tokens[1].text;
                if (key == "role" && v != "arm" && v != "gripper")
                    fail(l, "role", "expected 'arm' or 'gripper', got '" + v + "'");
                (key == "base" ? info.base : key == "tip" ? info.tip : info.role) = v;
            } else if (key == "margin") {
                once(l);
                need(l, 2, "the kinematic margin");
                const double v = finite(l, 1, "margin", "");
                if (v < 0) fail(l, "margin", "must be >= 0, got '" + l.tokens[1].text + "'");
                info.kinematic_margin = v;
            } else if (key == "joint") {
                joints.push_back(joint(l));
                for (size_t k = 0; k + 1 < joints.size(); ++k)
                    if (joints[k].name == joints.back().name)
                        fail(l, "name", "joint '" + joints.back().name + "' is named twice");
            } else if (key == "tip_transform") {
                once(l);
                need(l, 13, "x y z r00..r22");
                if (l.tokens.size() > 13) fail(l, "", "'tip_transform' takes 12 values");
                tip_T = transform(l, 1, "", "tip_transform: ");
                have_tip_T = true;
            } else if (key == "tcp") {
                once(l);
                need(l, 14, "name x y z r00..r22");
                if (l.tokens.size() > 14) fail(l, "", "'tcp' takes a name and 12 values");
                info.tcp_name = l.tokens[1].text;
                tcp_T = transform(l, 2, "", "tcp: ");
                have_tcp = true;
            } else if (key == "constraint") {
                if (l.tokens.size() < 3) fail(l, "kind", "expected 'constraint linear|quadrant <name> ...'");
                const std::string& kind = l.tokens[1].text;
                const std::string& name = l.tokens[2].text;
                const std::string who = "constraint '" + name + "': ";
                if (kind == "linear") {
                    if (l.tokens.size() != static_cast<size_t>(3 + dof + 1))
                        fail(l, "", who + "a linear row has " + std::to_string(dof) +
                                        " coefficients (one per joint) and b; got " +
                                        std::to_string(l.tokens.size() - 3) + " values");
                    const bool extend = !linear.empty() && linear.back().name == name &&
                                        last_linear_line_ + 1 == static_cast<int>(i);
                    if (!extend) {
                        LinearConstraint c;
                        c.name = name;
                        linear.push_back(c);
                    }
                    LinearConstraint& c = linear.back();
                    for (int k = 0; k < dof; ++k)
                        c.A.push_back(finite(l, static_cast<size_t>(3 + k), "a" + std::to_string(k), who));
                    c.b.push_back(finite(l, static_cast<size_t>(3 + dof), "b", who));
                    ++c.rows;
                    last_linear_line_ = static_cast<int>(i);
                } else if (kind == "quadrant") {
                    need(l, 29, "i j and four rows of i_nonneg j_nonneg a0 a1 a2 upper");
                    QuadrantConstraint c;
                    c.name = name;
                    c.joint_i = index(l, 3, "i", who, dof);
                    c.joint_j = index(l, 4, "j", who, dof);
                    if (c.joint_i == c.joint_j) fail(l, "j", who + "couples a joint with itself");
                    bool got[2][2] = {{false, false}, {false, false}};
                    for (int r = 0; r < 4; ++r) {
                        const size_t b = 5 + static_cast<size_t>(6 * r);
                        const std::string p = "row" + std::to_string(r + 1) + ".";
                        QuadrantRow& q = c.rows[static_cast<size_t>(r)];
                        q.i_nonneg = flag(l, b, p + "i_nonneg", who);
                        q.j_nonneg = flag(l, b + 1, p + "j_nonneg", who);
                        q.a0 = finite(l, b + 2, p + "a0", who);
                        q.a1 = finite(l, b + 3, p + "a1", who);
                        q.a2 = finite(l, b + 4, p + "a2", who);
                        q.upper = flag(l, b + 5, p + "upper", who);
                        bool& g = got[q.i_nonneg ? 1 : 0][q.j_nonneg ? 1 : 0];
                        if (g) fail(l, p + "i_nonneg", who + "two rows for the same sign quadrant");
                        g = true;
                    }
                    c.description = rest(l, 29);
                    quadrant.push_back(c);
                } else {
                    fail(l, "kind", "unknown constraint kind '" + kind + "'; expected 'linear' or 'quadrant'");
                }
            } else {
                fail(l, "keyword", "unknown keyword '" + key +
                                       "'; expected name, source, note, base, tip, role, margin, "
                                       "joint, tip_transform, tcp or constraint");
            }
        }
        if (joints.empty())
            throw ChainFileError(origin_, last_line_, "joint", "the file has no 'joint' lines");
        if (!have_tip_T)
            throw ChainFileError(origin_, last_line_, "tip_transform",
                                 "the file has no 'tip_transform' line");
        if (!have_tcp) info.tcp_name.clear();
        try {
            return Chain(std::move(joints), tip_T, have_tcp ? tcp_T : Mat4{}, std::move(linear),
                         std::move(quadrant), info);
        } catch (const ModelError& e) {
            throw ChainFileError(origin_, last_line_, "", e.what());
        }
    }

    Joint joint(const Line& l) const {
        if (l.tokens.size() != 24) {
            const std::string who = l.tokens.size() > 1 ? "joint '" + l.tokens[1].text + "': " : "";
            fail(l, "", who + "a joint line has 23 fields (name type link x y z r00..r22 ax ay az "
                              "lower upper velocity acceleration jerk); got " +
                            std::to_string(l.tokens.size() - 1));
        }
        Joint j;
        j.name = l.tokens[1].text;
        const std::string who = "joint '" + j.name + "': ";
        const std::string& t = l.tokens[2].text;
        if (t == "revolute")
            j.type = JointType::Revolute;
        else if (t == "continuous")
            j.type = JointType::Continuous;
        else if (t == "prismatic")
            j.type = JointType::Prismatic;
        else
            fail(l, "type", who + "expected revolute, continuous or prismatic, got '" + t + "'");
        j.link = l.tokens[3].text;
        j.origin = transform(l, 4, "origin.", who);
        const char* ax[3] = {"axis.x", "axis.y", "axis.z"};
        for (int k = 0; k < 3; ++k) j.axis[static_cast<size_t>(k)] = finite(l, 16 + static_cast<size_t>(k), ax[k], who);
        const double nrm = std::sqrt(j.axis[0] * j.axis[0] + j.axis[1] * j.axis[1] + j.axis[2] * j.axis[2]);
        if (nrm < 1e-9) fail(l, "axis.x", who + "the axis is zero");
        j.lower = number(l, 19, "lower", who);
        j.upper = number(l, 20, "upper", who);
        if (j.lower > j.upper) fail(l, "upper", who + "upper < lower");
        const char* rate[3] = {"velocity", "acceleration", "jerk"};
        double* dst[3] = {&j.velocity, &j.acceleration, &j.jerk};
        for (int k = 0; k < 3; ++k) {
            const double v = number(l, 21 + static_cast<size_t>(k), rate[k], who);
            if (!(v > 0)) fail(l, rate[k], who + "must be positive (inf for unknown), got '" +
                                               l.tokens[21 + static_cast<size_t>(k)].text + "'");
            *dst[k] = v;
        }
        return j;
    }

private:
    std::string origin_;
    int last_line_ = 0;
    int last_linear_line_ = -10;
};

std::string g17(double v) {
    char buf[40];
    std::snprintf(buf, sizeof buf, "%.17g", v);
    return buf;
}

void put_transform(std::ostringstream& o, const Mat4& T) {
    o << g17(T.m[0][3]) << ' ' << g17(T.m[1][3]) << ' ' << g17(T.m[2][3]);
    for (int r = 0; r < 3; ++r)
        for (int c = 0; c < 3; ++c) o << ' ' << g17(T.m[r][c]);
}

void check_token(const std::string& s, const std::string& what) {
    if (s.empty()) throw InputError(what + " is empty; the chain file needs a name");
    for (char c : s)
        if (c == ' ' || c == '\t' || c == '\n' || c == '\r')
            throw InputError(what + " '" + s + "' contains whitespace; the chain file cannot hold it");
    if (s[0] == '#') throw InputError(what + " '" + s + "' starts with '#'");
}

void check_text(const std::string& s, const std::string& what) {
    if (s.find('\n') != std::string::npos || s.find('\r') != std::string::npos)
        throw InputError(what + " contains a line break; the chain file cannot hold it");
}

}  // namespace

Chain Chain::from_string(const std::string& text, const std::string& origin) {
    return Reader(origin).read(text);
}

Chain Chain::from_file(const std::string& path) {
    std::ifstream in(path, std::ios::binary);
    if (!in) throw ChainFileError(path, 0, "", "cannot open the file");
    std::ostringstream ss;
    ss << in.rdbuf();
    return from_string(ss.str(), path);
}

std::string Chain::to_string() const {
    std::ostringstream o;
    o << "ikstack-chain " << kVersion << '\n';
    if (!info_.name.empty()) {
        check_text(info_.name, "the chain name");
        o << "name " << info_.name << '\n';
    }
    if (!info_.source.empty()) {
        check_text(info_.source, "the source");
        o << "source " << info_.source << '\n';
    }
    for (const std::string& n : info_.notes) {
        check_text(n, "a note");
        o << "note " << n << '\n';
    }
    check_token(info_.base, "the base link");
    check_token(info_.tip, "the tip link");
    o << "base " << info_.base << '\n' << "tip " << info_.tip << '\n';
    o << "role " << info_.role << '\n';
    o << "margin " << g17(info_.kinematic_margin) << '\n';
    for (const Joint& j : joints_) {
        check_token(j.name, "a joint name");
        check_token(j.link, "the link of joint '" + j.name + "'");
        o << "joint " << j.name << ' ' << joint_type_name(j.type) << ' ' << j.link << ' ';
        put_transform(o, j.origin);
        o << ' ' << g17(j.axis[0]) << ' ' << g17(j.axis[1]) << ' ' << g17(j.axis[2]) << ' '
          << g17(j.lower) << ' ' << g17(j.upper) << ' ' << g17(j.velocity) << ' '
          << g17(j.acceleration) << ' ' << g17(j.jerk) << '\n';
    }
    o << "tip_transform ";
    put_transform(o, T_last_tip_);
    o << '\n';
    if (!info_.tcp_name.empty()) {
        check_token(info_.tcp_name, "the TCP name");
        o << "tcp " << info_.tcp_name << ' ';
        put_transform(o, T_tip_tcp_);
        o << '\n';
    }
    const int n = dof();
    for (const LinearConstraint& c : linear_) {
        check_token(c.name, "a constraint name");
        for (int r = 0; r < c.rows; ++r) {
            o << "constraint linear " << c.name;
            for (int i = 0; i < n; ++i) o << ' ' << g17(c.A[static_cast<size_t>(r * n + i)]);
            o << ' ' << g17(c.b[static_cast<size_t>(r)]) << '\n';
        }
    }
    for (const QuadrantConstraint& c : quadrant_) {
        check_token(c.name, "a constraint name");
        check_text(c.description, "the description of constraint '" + c.name + "'");
        o << "constraint quadrant " << c.name << ' ' << c.joint_i << ' ' << c.joint_j;
        for (const QuadrantRow& r : c.rows)
            o << ' ' << (r.i_nonneg ? 1 : 0) << ' ' << (r.j_nonneg ? 1 : 0) << ' ' << g17(r.a0)
              << ' ' << g17(r.a1) << ' ' << g17(r.a2) << ' ' << (r.upper ? 1 : 0);
        if (!c.description.empty()) o << ' ' << c.description;
        o << '\n';
    }
    return o.str();
}

void Chain::to_file(const std::string& path) const {
    const std::string text = to_string();
    const std::string tmp = path + ".tmp";
    {
        std::ofstream out(tmp, std::ios::binary | std::ios::trunc);
        if (!out) throw InputError("cannot write " + path + ": cannot open " + tmp);
        out << text;
        out.flush();
        if (!out) {
            std::remove(tmp.c_str());
            throw InputError("cannot write " + path);
        }
    }
    if (std::rename(tmp.c_str(), path.c_str()) != 0) {
        std::remove(tmp.c_str());
        throw InputError("cannot write " + path + ": rename failed");
    }
}

}  // namespace ikstack
