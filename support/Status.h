// Errors as values at library boundaries: libraries return Status/Result, the
// driver prints the message as one line and exits 2. Libraries never call exit.
#pragma once

#include <optional>
#include <sstream>
#include <string>
#include <utility>

namespace tpu {

class Status {
public:
  Status() = default;
  static Status ok() { return Status(); }
  static Status error(std::string message) {
    Status s;
    s.message_ = std::move(message);
    s.failed_ = true;
    return s;
  }
  bool isOk() const { return !failed_; }
  explicit operator bool() const { return !failed_; }
  const std::string &message() const { return message_; }
  // Adds context in front of the message: "file.bmodel: net 0: " + message.
  Status &prefix(const std::string &context) {
    if (failed_) message_ = context + ": " + message_;
    return *this;
  }

private:
  std::string message_;
  bool failed_ = false;
};

// A value or the Status explaining why there is none.
template <typename T> class Result {
public:
  Result(T value) : value_(std::move(value)) {}
  Result(Status status) : status_(std::move(status)) {}
  bool isOk() const { return value_.has_value(); }
  explicit operator bool() const { return isOk(); }
  const Status &status() const { return status_; }
  const std::string &message() const { return status_.message(); }
  T &value() { return *value_; }
  const T &value() const { return *value_; }
  T &operator*() { return *value_; }
  const T &operator*() const { return *value_; }
  T *operator->() { return &*value_; }
  const T *operator->() const { return &*value_; }
  T take() { return std::move(*value_); }
  Result &prefix(const std::string &context) {
    status_.prefix(context);
    return *this;
  }

private:
  std::optional<T> value_;
  Status status_;
};

// Builds a message from streamable parts: makeError("field ", name, " = ", v).
template <typename... Args> Status makeError(const Args &...args) {
  std::ostringstream os;
  (os << ... << args);
  return Status::error(os.str());
}

} // namespace tpu

#define TPU_RETURN_IF_ERROR(expr)                                              \
  do {                                                                         \
    ::tpu::Status _st = (expr);                                                \
    if (!_st.isOk()) return _st;                                               \
  } while (0)

// `TPU_ASSIGN_OR_RETURN(double v, number(...));` declares or assigns the
// value of a Result, or returns its Status from the enclosing function.
#define TPU_STATUS_CONCAT_(a, b) a##b
#define TPU_STATUS_CONCAT(a, b) TPU_STATUS_CONCAT_(a, b)
#define TPU_ASSIGN_OR_RETURN(lhs, expr) TPU_ASSIGN_OR_RETURN_(TPU_STATUS_CONCAT(_result_, __LINE__), lhs, expr)
#define TPU_ASSIGN_OR_RETURN_(tmp, lhs, expr)                                  \
  auto tmp = (expr);                                                           \
  if (!tmp) return tmp.status();                                               \
  lhs = tmp.take()
