// Loopback test servers: free ports, the redis-server child and its readiness check (a RESP
// PING written by hand, since the test support links no Redis client), and HTTP GET.
#include "tests/support/loopback.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <stdexcept>
#include <thread>

namespace protuner::testing {
namespace {

sockaddr_in loopback_address(int port) {
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_port = htons(static_cast<uint16_t>(port));
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  return addr;
}

// A TCP socket bound to 127.0.0.1 on a port the kernel picks; sets `port`.
int bound_loopback_socket(int &port) {
  const int fd = socket(AF_INET, SOCK_STREAM, 0);
  if (fd < 0) throw std::runtime_error("socket() failed");
  sockaddr_in addr = loopback_address(0);
  socklen_t len = sizeof(addr);
  if (bind(fd, reinterpret_cast<sockaddr *>(&addr), sizeof(addr)) != 0 ||
      getsockname(fd, reinterpret_cast<sockaddr *>(&addr), &len) != 0) {
    close(fd);
    throw std::runtime_error("cannot bind a loopback port");
  }
  port = ntohs(addr.sin_port);
  return fd;
}

// One command in RESP, as redis-cli would send it.
std::string resp_command(const std::vector<std::string> &args) {
  std::string out = "*" + std::to_string(args.size()) + "\r\n";
  for (const std::string &a : args) out += "$" + std::to_string(a.size()) + "\r\n" + a + "\r\n";
  return out;
}

// Whether a Redis server on `port` answers PING with PONG (after AUTH when a password is set).
bool answers_ping(int port, const std::string &password) {
  const int fd = connect_loopback(port);
  if (fd < 0) return false;
  timeval patience{0, 200 * 1000};
  setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &patience, sizeof(patience));
  std::string request = password.empty() ? "" : resp_command({"AUTH", password});
  request += resp_command({"PING"});
  const size_t replies = password.empty() ? 1 : 2;
  std::string response;
  if (write(fd, request.data(), request.size()) == static_cast<ssize_t>(request.size())) {
    char buf[512];
    auto lines = [&] {
      size_t n = 0;
      for (size_t at = 0; (at = response.find("\r\n", at)) != std::string::npos; at += 2) ++n;
      return n;
    };
    for (ssize_t n; lines() < replies && (n = read(fd, buf, sizeof(buf))) > 0;) {
      response.append(buf, n);
    }
  }
  close(fd);
  const std::string pong = "+PONG\r\n";
  return response.size() >= pong.size() &&
         response.compare(response.size() - pong.size(), pong.size(), pong) == 0;
}

}  // namespace

int connect_loopback(int port) {
  const int fd = socket(AF_INET, SOCK_STREAM, 0);
  if (fd < 0) return -1;
  const sockaddr_in addr = loopback_address(port);
  if (connect(fd, reinterpret_cast<const sockaddr *>(&addr), sizeof(addr)) != 0) {
    close(fd);
    return -1;
  }
  return fd;
}

LoopbackListener::LoopbackListener(int backlog) {
  fd_ = bound_loopback_socket(port_);
  if (listen(fd_, backlog) != 0) {
    close(fd_);
    throw std::runtime_error("cannot listen on 127.0.0.1:" + std::to_string(port_));
  }
}

LoopbackListener::~LoopbackListener() { close(fd_); }

RedisServer::RedisServer() : RedisServer(RedisServerOptions{}) {}

RedisServer::RedisServer(RedisServerOptions options)
    : options_(std::move(options)), port_(free_loopback_port()) {
  std::string dir = (std::filesystem::temp_directory_path() / "protuner-redis-XXXXXX").string();
  if (mkdtemp(dir.data()) == nullptr) {
    throw std::runtime_error("cannot create a data directory for redis-server");
  }
  data_dir_ = dir;
  try {
    start();
  } catch (...) {
    std::filesystem::remove_all(data_dir_);
    throw;
  }
}

RedisServer::~RedisServer() {
  if (running()) signal_and_wait(SIGTERM);
  std::error_code ignored;
  std::filesystem::remove_all(data_dir_, ignored);
}

void RedisServer::stop() { signal_and_wait(SIGTERM); }

void RedisServer::kill() { signal_and_wait(SIGKILL); }

void RedisServer::signal_and_wait(int signal) {
  if (!running()) throw std::runtime_error("redis-server is not running");
  ::kill(pid_, signal);
  waitpid(pid_, nullptr, 0);
  pid_ = -1;
}

void RedisServer::start() {
  if (running()) throw std::runtime_error("redis-server is already running");
  std::vector<std::string> args = {PROTUNER_REDIS_SERVER, "--port", std::to_string(port_)};
  args.insert(args.end(), {"--bind", "127.0.0.1", "--dir", data_dir_, "--save", ""});
  args.insert(args.end(), {"--daemonize", "no", "--loglevel", "warning"});
  args.insert(args.end(), {"--appendonly", options_.aof ? "yes" : "no"});
  if (options_.aof) args.insert(args.end(), {"--appendfsync", "always"});
  if (!options_.password.empty()) args.insert(args.end(), {"--requirepass", options_.password});
  args.insert(args.end(), options_.extra_args.begin(), options_.extra_args.end());
  std::vector<char *> argv;
  for (std::string &a : args) argv.push_back(a.data());
  argv.push_back(nullptr);

  pid_ = fork();
  if (pid_ < 0) {
    pid_ = -1;
    throw std::runtime_error("fork failed");
  }
  if (pid_ == 0) {
    execv(argv[0], argv.data());
    _exit(127);
  }
  // Ready when it answers PING: accepting connections is not enough, since a server loading
  // its AOF answers LOADING. Give up after 10 s.
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
  while (std::chrono::steady_clock::now() < deadline) {
    if (answers_ping(port_, options_.password)) return;
    int status = 0;
    if (waitpid(pid_, &status, WNOHANG) == pid_) {
      pid_ = -1;
      throw std::runtime_error("redis-server exited at start-up");
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  signal_and_wait(SIGKILL);
  throw std::runtime_error("redis-server did not answer PING within 10 s");
}

std::string http_get(int port, const std::string &path) {
  const int fd = connect_loopback(port);
  if (fd < 0) throw std::runtime_error("cannot connect to 127.0.0.1:" + std::to_string(port));
  const std::string request =
      "GET " + path + " HTTP/1.0\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n";
  if (write(fd, request.data(), request.size()) != static_cast<ssize_t>(request.size())) {
    close(fd);
    throw std::runtime_error("short write to 127.0.0.1:" + std::to_string(port));
  }
  std::string response;
  char buf[4096];
  for (ssize_t n; (n = read(fd, buf, sizeof(buf))) > 0;) response.append(buf, n);
  close(fd);
  return response;
}

}  // namespace protuner::testing
