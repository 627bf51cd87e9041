// RedisOptions' checks and the redis:// URL parser.
#include "common/redis_options.h"

#include <cctype>
#include <cstdlib>
#include <optional>

#include "common/errors.h"

namespace protuner {
namespace {

constexpr const char *kScheme = "redis://";

// Digits only, at most nine of them, so the value fits an int; nullopt otherwise.
std::optional<int> parse_decimal(const std::string &s) {
  if (s.empty() || s.size() > 9) return std::nullopt;
  int value = 0;
  for (char c : s) {
    if (!std::isdigit(static_cast<unsigned char>(c))) return std::nullopt;
    value = value * 10 + (c - '0');
  }
  return value;
}

// Where the user info ends: the last '@', since host, port and db cannot hold one and a
// password may (unencoded) all the same.
size_t user_info_end(const std::string &url) { return url.rfind('@'); }

// The URL as it may be shown: a password (after the first ':' of the user info) becomes ***.
std::string redacted(const std::string &url) {
  const size_t at = user_info_end(url);
  if (at == std::string::npos) return url;
  const size_t scheme_end = url.find("://");
  const size_t info_begin = scheme_end == std::string::npos ? 0 : scheme_end + 3;
  if (info_begin > at) return url;
  const size_t colon = url.find(':', info_begin);
  if (colon == std::string::npos || colon > at) return url;
  return url.substr(0, colon + 1) + "***" + url.substr(at);
}

int hex_digit(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

// Decodes %XX escapes; nullopt on a malformed one.
std::optional<std::string> percent_decoded(const std::string &s) {
  std::string out;
  out.reserve(s.size());
  for (size_t i = 0; i < s.size(); ++i) {
    if (s[i] != '%') {
      out += s[i];
      continue;
    }
    if (i + 2 >= s.size()) return std::nullopt;
    const int high = hex_digit(s[i + 1]);
    const int low = hex_digit(s[i + 2]);
    if (high < 0 || low < 0) return std::nullopt;
    out += static_cast<char>(high * 16 + low);
    i += 2;
  }
  return out;
}

// AUTH with a user needs a password; nullopt when the credentials are complete.
std::optional<std::string> credentials_problem(const RedisOptions &options) {
  if (options.username.empty() || !options.password.empty()) return std::nullopt;
  return "user '" + options.username + "' has no password (give it in the URL or in " +
         kRedisPasswordEnv + ")";
}

}  // namespace

std::string RedisOptions::endpoint() const {
  const bool v6 = host.find(':') != std::string::npos;
  std::string out = (v6 ? "[" + host + "]" : host) + ":" + std::to_string(port);
  if (db != 0) out += "/" + std::to_string(db);
  return out;
}

void RedisOptions::validate() const {
  const std::string where = "redis " + endpoint() + ": ";
  if (host.empty()) throw ConfigError("redis: no host given");
  if (port < 1 || port > 65535) {
    throw ConfigError(where + "port " + std::to_string(port) + " is not in 1..65535");
  }
  if (db < 0) throw ConfigError(where + "database index " + std::to_string(db) + " is negative");
  if (const auto problem = credentials_problem(*this)) throw ConfigError(where + *problem);
  const auto non_negative = [&](std::chrono::milliseconds t, const char *name) {
    if (t.count() < 0) throw ConfigError(where + name + " is negative");
  };
  non_negative(connect_timeout, "connect_timeout");
  non_negative(command_timeout, "command_timeout");
  non_negative(reconnect_backoff_initial, "reconnect_backoff_initial");
  non_negative(reconnect_backoff_max, "reconnect_backoff_max");
  if (reconnect_backoff_initial > reconnect_backoff_max) {
    throw ConfigError(where + "reconnect_backoff_initial (" +
                      std::to_string(reconnect_backoff_initial.count()) +
                      " ms) is above reconnect_backoff_max (" +
                      std::to_string(reconnect_backoff_max.count()) + " ms)");
  }
}

RedisOptions parse_redis_url(const std::string &url) {
  const auto fail = [&](const std::string &why) {
    throw ConfigError("redis URL '" + redacted(url) + "': " + why);
  };
  if (url.rfind("rediss://", 0) == 0) fail("rediss:// (TLS) is not supported by hiredis 0.14");
  if (url.rfind(kScheme, 0) != 0) fail("it must start with redis://");

  RedisOptions options;
  std::string rest = url.substr(std::string(kScheme).size());
  const size_t at = user_info_end(rest);
  if (at != std::string::npos) {
    const std::string info = rest.substr(0, at);
    rest = rest.substr(at + 1);
    if (info.empty()) fail("nothing between redis:// and '@' (leave out the '@' for no user)");
    const size_t colon = info.find(':');
    const auto user = percent_decoded(info.substr(0, colon));
    if (!user) fail("malformed %-escape in the user");
    options.username = *user;
    if (colon != std::string::npos) {
      const auto password = percent_decoded(info.substr(colon + 1));
      if (!password) fail("malformed %-escape in the password");
      if (password->empty()) {
        fail(std::string("empty password after ':' (leave out the ':' to take it from ") +
             kRedisPasswordEnv + ")");
      }
      options.password = *password;
    }
  }
  if (rest.find_first_of("?#") != std::string::npos) {
    fail("query parameters and fragments are not supported");
  }

  const size_t slash = rest.find('/');
  const std::string host_port = rest.substr(0, slash);
  std::string port_part;
  bool has_port = false;
  if (!host_port.empty() && host_port[0] == '[') {
    const size_t close = host_port.find(']');
    if (close == std::string::npos) fail("'[' opens an IPv6 host that no ']' closes");
    options.host = host_port.substr(1, close - 1);
    const std::string after = host_port.substr(close + 1);
    if (!after.empty() && after[0] != ':') fail("after ']' only ':port' may follow");
    has_port = !after.empty();
    if (has_port) port_part = after.substr(1);
  } else {
    const size_t colon = host_port.find(':');
    options.host = host_port.substr(0, colon);
    has_port = colon != std::string::npos;
    if (has_port) port_part = host_port.substr(colon + 1);
  }
  if (options.host.empty()) fail("no host");
  for (char c : options.host) {
    if (std::isspace(static_cast<unsigned char>(c)) ||
        std::iscntrl(static_cast<unsigned char>(c))) {
      fail("the host contains a space or control character");
    }
  }
  if (has_port) {
    const auto port = parse_decimal(port_part);
    if (!port || *port < 1 || *port > 65535) {
      fail("port '" + port_part + "' is not a number in 1..65535");
    }
    options.port = *port;
  }
  if (slash != std::string::npos && slash + 1 < rest.size()) {
    const std::string db_part = rest.substr(slash + 1);
    const auto db = parse_decimal(db_part);
    if (!db) fail("database '" + db_part + "' is not a non-negative integer");
    options.db = *db;
  }

  if (options.password.empty()) {
    if (const char *env = std::getenv(kRedisPasswordEnv); env != nullptr) options.password = env;
  }
  if (const auto problem = credentials_problem(options)) fail(*problem);
  return options;
}

}  // namespace protuner
