// Reading the test fixtures: one record a line, "<tag> <numbers...>"; '#' lines are comments.
#pragma once

#include <fstream>
#include <sstream>
#include <stdexcept>
#include <string>
#include <vector>

namespace fixture {

struct Record {
    std::string tag;
    std::vector<double> v;
};

inline std::string path(const std::string& name) { return std::string(IKSTACK_FIXTURES_DIR) + "/" + name; }

inline std::vector<Record> read(const std::string& name) {
    std::ifstream in(path(name));
    if (!in) throw std::runtime_error("cannot open fixture " + path(name));
    std::vector<Record> out;
    std::string line;
    while (std::getline(in, line)) {
        if (line.empty() || line[0] == '#') continue;
        std::istringstream ss(line);
        Record r;
        ss >> r.tag;
        std::string tok;
        while (ss >> tok) r.v.push_back(std::strtod(tok.c_str(), nullptr));
        out.push_back(r);
    }
    return out;
}

inline std::string slurp(const std::string& file) {
    std::ifstream in(file, std::ios::binary);
    std::ostringstream ss;
    ss << in.rdbuf();
    return ss.str();
}

}  // namespace fixture
