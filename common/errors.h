// The error types every protuner component throws. A small hierarchy, so callers retry what
// can be retried (I/O, timeouts) and fail fast on the rest, and every message can say what
// is wrong, where, and what to do about it.
#pragma once

#include <stdexcept>
#include <string>
#include <utility>

namespace protuner {

// Base of every error protuner raises on purpose.
class Error : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// A user-supplied file or value is wrong (suite file, schedule, settings). Not retryable.
class ConfigError : public Error {
 public:
  using Error::Error;
};

// A generator library or a generator in it could not be loaded or instantiated.
class AppLoadError : public Error {
 public:
  using Error::Error;
};

// A network or I/O operation failed; the same call may succeed later.
class IoError : public Error {
 public:
  using Error::Error;
};

// An operation did not finish within its deadline; the same call may succeed later.
class TimeoutError : public IoError {
 public:
  using IoError::IoError;
};

// A server answered, but with an error reply (Redis error, measurer error reply).
class ReplyError : public Error {
 public:
  using Error::Error;
  ReplyError(const std::string &what, std::string code) : Error(what), code_(std::move(code)) {}

  // The server's error code when it gives one (Redis: the reply's first word, such as
  // WRONGTYPE, NOSCRIPT or BUSYGROUP), so callers branch on it without parsing the message;
  // empty otherwise.
  const std::string &code() const { return code_; }

 private:
  std::string code_;
};

// The server refused the credentials, or wants some (Redis: WRONGPASS, NOAUTH). Retrying
// cannot help; the configuration must change.
class AuthError : public ReplyError {
 public:
  AuthError(const std::string &what, std::string code) : ReplyError(what, std::move(code)) {}
};

}  // namespace protuner
