// The measurer service's wire protocol, in one place: the envelope every ZeroMQ message
// carries, its message types, version and the protocol constants both the daemon and the
// client use. A searcher and a measurer built from different commits must either agree or
// refuse each other with a message naming the mismatch, never misread each other.
//
// Every message is one ZeroMQ frame holding one JSON object (after the ROUTER's routing
// frames, and an optional empty delimiter frame from REQ-style peers):
//
//   {"protocol": "protuner-measure", "version": 2, "type": T, "id": "<request id>", "body": {..}}
//
//   T          from     id          body
//   measure    client   required    a request (measure_json.h)
//   result     daemon   request's   a result (measure_json.h); a bad body is a bad_request result
//   heartbeat  both     ""          client: {"seq": n}, a ping; daemon: HeartbeatBody below
//   cancel     client   required    {}: drop that request of this client if it is still queued
//   error      daemon   if known    {"error": "what is wrong", "retry": bool}
//   ready      daemon   ""          ReadyBody below: sent to a client the first time it is heard
//
// "retry" says whether the same request may succeed elsewhere (the daemon is shutting down)
// or not (the message itself is wrong).
//
// A client names its socket with a stable routing id (client_routing_id) and the daemon's
// ROUTER hands a returning id over to the new connection, so a reply sent after a client
// reconnected still reaches it. Messages between one client and one daemon arrive in the
// order they were sent; the ping sequence numbers rest on that: a daemon heartbeat that
// acknowledges ping n was written after the daemon had read everything the client sent
// before ping n, so a request sent before ping n and absent from that heartbeat (with no
// result before it) is lost, and the client retries it at once.
#pragma once

#include <chrono>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "common/errors.h"
#include "measurer/measurement.h"

namespace protuner::wire {

inline constexpr const char *kProtocol = "protuner-measure";
inline constexpr int kVersion = 2;

// Heartbeats, as in ZeroMQ's Paranoid Pirate: each side sends one every interval and
// declares the other dead after `kLiveness` intervals of silence (3-5 is reasonable: fewer
// mistakes a GC pause or a loaded host for death, more makes failover slow).
inline constexpr std::chrono::milliseconds kDefaultHeartbeatInterval{1000};
inline constexpr int kLiveness = 3;

// Frames larger than this are refused before parsing (ZMQ_MAXMSGSIZE drops the peer's
// connection): a schedule is kilobytes, so anything near this is garbage or an attack.
inline constexpr int64_t kMaxMessageBytes = 64 << 20;

enum class MessageType { kMeasure, kResult, kHeartbeat, kCancel, kError, kReady };

// "measure", "result", "heartbeat", "cancel", "error", "ready".
const char *type_name(MessageType type);

// A message that is not a valid envelope, or whose body does not fit its type. `id()` is
// the request id when the envelope had a readable one, so the error reply can name it.
class WireError : public Error {
 public:
  WireError(const std::string &what, std::string id = "") : Error(what), id_(std::move(id)) {}
  const std::string &id() const { return id_; }

 private:
  std::string id_;
};

struct Message {
  MessageType type = MessageType::kHeartbeat;
  std::string id;
  std::string body = "{}";  // the body object as JSON text
};

// One frame of JSON. format_message throws WireError if `body` is not a JSON object.
std::string format_message(const Message &message);
// Throws WireError naming what is wrong: not JSON, not an object, wrong protocol or
// version, unknown type, id not a string, body not an object, a measure without an id.
Message parse_message(std::string_view frame);

// What a daemon says in its heartbeats to one client: whether it is measuring, how long its
// queue is, and which of *this client's* requests it holds (queued or running), so the
// client can tell "waiting behind others" from "lost".
struct HeartbeatBody {
  bool busy = false;
  int queue_length = 0;           // requests waiting, all clients, not counting the running one
  std::string running;            // id of this client's request being measured, or ""
  std::vector<std::string> pending;  // ids of this client's requests queued or running
  // In a client's ping, its sequence number (1, 2, ...); in a daemon's heartbeat, the
  // highest ping sequence number it has read from this client (0: none yet).
  int64_t seq = 0;
};

// What a daemon announces to a client it has not heard from recently. `instance` is new
// each time a daemon starts: a client that sees it change while a request is outstanding
// there knows the daemon restarted and forgot the request.
struct ReadyBody {
  int heartbeat_ms = 0;
  std::string host;      // the host's CPU model, for logs
  std::string instance;  // random per daemon process
};

struct ErrorBody {
  std::string error;
  bool retry = false;
};

Message measure_message(const std::string &id, const MeasureRequest &request);
Message result_message(const std::string &id, const MeasureResult &result);
Message heartbeat_message(const HeartbeatBody &body);
Message ping_message(int64_t seq);
Message cancel_message(const std::string &id);
Message ready_message(const ReadyBody &body);
Message error_message(const std::string &id, const ErrorBody &body);

// The routing id a client's socket to measurer number `link` carries: stable for the
// client's lifetime, unique across clients (`client_tag` is random per client).
std::string client_routing_id(const std::string &client_tag, size_t link);

// Body readers for each type; each throws WireError (with the message's id) naming the
// field that is wrong. A measure body that request_from_json refuses is a WireError too.
MeasureRequest read_measure(const Message &message);
MeasureResult read_result(const Message &message);
// A ping ({"seq": n}, or {} from a peer that does not number its pings) has only `seq` set.
HeartbeatBody read_heartbeat(const Message &message);
ReadyBody read_ready(const Message &message);
ErrorBody read_error(const Message &message);

}  // namespace protuner::wire
