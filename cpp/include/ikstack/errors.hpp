// The exceptions the C++ library throws at its boundaries (construction, file reading).
// Nothing in a per-cycle path (fk, jacobian, solve, generate) throws: those report status.
#pragma once

#include <stdexcept>
#include <string>

namespace ikstack {

/// Root of every error ikstack throws on purpose.
class Error : public std::runtime_error {
public:
    explicit Error(const std::string& what) : std::runtime_error(what) {}
};

/// An argument has the wrong size or value.
class InputError : public Error {
public:
    using Error::Error;
};

/// A kinematic model is malformed or cannot be built.
class ModelError : public Error {
public:
    using Error::Error;
};

/// A chain description file is malformed; the message names the file, the line and the field
/// ("chain.txt:7: joint 'j2' field 'upper': expected a number, got 'abc'").
class ChainFileError : public InputError {
public:
    ChainFileError(const std::string& file, int line, const std::string& field,
                   const std::string& problem)
        : InputError(file + ":" + std::to_string(line) + ": " +
                     (field.empty() ? std::string() : "field '" + field + "': ") + problem),
          file_(file), line_(line), field_(field) {}
    const std::string& file() const { return file_; }
    int line() const { return line_; }
    const std::string& field() const { return field_; }

private:
    std::string file_;
    int line_;
    std::string field_;
};

}  // namespace ikstack
