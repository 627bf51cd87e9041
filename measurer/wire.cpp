// Envelope parsing and formatting for the measurer protocol (wire.h). Parsing is strict and
// never trusts the peer: every field is type-checked and every failure is a WireError whose
// text names the field, so a daemon can send it back and keep serving.
#include "measurer/wire.h"

#include <nlohmann/json.hpp>

#include <cstdint>

#include "measurer/measure_json.h"

namespace protuner::wire {
namespace {

using json = nlohmann::json;

constexpr MessageType kAllTypes[] = {MessageType::kMeasure, MessageType::kResult,
                                     MessageType::kHeartbeat, MessageType::kCancel,
                                     MessageType::kError, MessageType::kReady};

// Frames are arbitrary bytes from the network; show a short, printable prefix in errors.
std::string preview(std::string_view frame) {
  constexpr size_t kMax = 40;
  std::string out;
  for (char c : frame.substr(0, kMax)) {
    const auto u = static_cast<unsigned char>(c);
    out += (u >= 0x20 && u < 0x7f) ? c : '?';
  }
  if (frame.size() > kMax) out += "...";
  return out;
}

json parse_object(const std::string &text, const std::string &what, const std::string &id) {
  json j;
  try {
    j = json::parse(text);
  } catch (const json::parse_error &e) {
    throw WireError(what + " is not valid JSON: " + e.what(), id);
  }
  if (!j.is_object()) throw WireError(what + " must be a JSON object", id);
  return j;
}

const json &field(const json &body, const char *key, const std::string &type,
                  const std::string &id) {
  if (!body.contains(key)) throw WireError(type + " body: '" + key + "' is missing", id);
  return body.at(key);
}

std::string string_field(const json &body, const char *key, const std::string &type,
                         const std::string &id) {
  const json &v = field(body, key, type, id);
  if (!v.is_string()) throw WireError(type + " body: '" + key + "' must be a string", id);
  return v.get<std::string>();
}

bool bool_field(const json &body, const char *key, const std::string &type,
                const std::string &id) {
  const json &v = field(body, key, type, id);
  if (!v.is_boolean()) throw WireError(type + " body: '" + key + "' must be true or false", id);
  return v.get<bool>();
}

int int_field(const json &body, const char *key, const std::string &type, const std::string &id) {
  const json &v = field(body, key, type, id);
  if (!v.is_number_integer() || v.get<int64_t>() < 0 || v.get<int64_t>() > INT32_MAX) {
    throw WireError(type + " body: '" + key + "' must be a non-negative integer", id);
  }
  return v.get<int>();
}

int64_t seq_field(const json &body, const std::string &id) {
  const json &v = field(body, "seq", "heartbeat", id);
  if (!v.is_number_integer() || v.get<int64_t>() < 0) {
    throw WireError("heartbeat body: 'seq' must be a non-negative integer", id);
  }
  return v.get<int64_t>();
}

void expect_type(const Message &message, MessageType type) {
  if (message.type != type) {
    throw WireError(std::string("expected a ") + type_name(type) + " message, got " +
                        type_name(message.type),
                    message.id);
  }
}

}  // namespace

const char *type_name(MessageType type) {
  switch (type) {
    case MessageType::kMeasure: return "measure";
    case MessageType::kResult: return "result";
    case MessageType::kHeartbeat: return "heartbeat";
    case MessageType::kCancel: return "cancel";
    case MessageType::kError: return "error";
    case MessageType::kReady: return "ready";
  }
  return "unknown";
}

std::string format_message(const Message &message) {
  json j;
  j["protocol"] = kProtocol;
  j["version"] = kVersion;
  j["type"] = type_name(message.type);
  j["id"] = message.id;
  j["body"] = parse_object(message.body, std::string(type_name(message.type)) + " body",
                           message.id);
  return j.dump();
}

Message parse_message(std::string_view frame) {
  json j;
  try {
    j = json::parse(frame.begin(), frame.end());
  } catch (const json::parse_error &) {
    throw WireError("message is not JSON (" + std::to_string(frame.size()) + " bytes: '" +
                    preview(frame) + "')");
  }
  if (!j.is_object()) throw WireError("message must be a JSON object, got '" + preview(frame) + "'");

  // The id first, so every later error can name the request it is about.
  Message m;
  if (j.contains("id")) {
    if (!j["id"].is_string()) throw WireError("message field 'id' must be a string");
    m.id = j["id"].get<std::string>();
  }
  if (!j.contains("protocol") || !j["protocol"].is_string()) {
    throw WireError(std::string("message field 'protocol' must be the string '") + kProtocol + "'",
                    m.id);
  }
  if (j["protocol"] != kProtocol) {
    throw WireError("unknown protocol '" + j["protocol"].get<std::string>() + "' (expected '" +
                        kProtocol + "')",
                    m.id);
  }
  if (!j.contains("version") || !j["version"].is_number_integer()) {
    throw WireError("message field 'version' must be an integer", m.id);
  }
  if (j["version"] != kVersion) {
    throw WireError("protocol version " + j["version"].dump() + " is not supported (this side " +
                        "speaks version " + std::to_string(kVersion) + ")",
                    m.id);
  }
  if (!j.contains("type") || !j["type"].is_string()) {
    throw WireError("message field 'type' must be a string", m.id);
  }
  const std::string type = j["type"].get<std::string>();
  bool known = false;
  for (MessageType t : kAllTypes) {
    if (type == type_name(t)) {
      m.type = t;
      known = true;
    }
  }
  if (!known) {
    throw WireError("unknown message type '" + type +
                        "' (expected measure, result, heartbeat, cancel, error or ready)",
                    m.id);
  }
  if (j.contains("body")) {
    if (!j["body"].is_object()) throw WireError("message field 'body' must be an object", m.id);
    m.body = j["body"].dump();
  }
  if ((m.type == MessageType::kMeasure || m.type == MessageType::kResult ||
       m.type == MessageType::kCancel) &&
      m.id.empty()) {
    throw WireError(type + " message without an 'id'");
  }
  for (const auto &item : j.items()) {
    const std::string &k = item.key();
    if (k != "protocol" && k != "version" && k != "type" && k != "id" && k != "body") {
      throw WireError("message field '" + k + "' is not part of the envelope", m.id);
    }
  }
  return m;
}

Message measure_message(const std::string &id, const MeasureRequest &request) {
  return {MessageType::kMeasure, id, request_to_json(request)};
}

Message result_message(const std::string &id, const MeasureResult &result) {
  return {MessageType::kResult, id, result_to_json(result)};
}

Message heartbeat_message(const HeartbeatBody &body) {
  json j{{"seq", body.seq},
         {"busy", body.busy},
         {"queue_length", body.queue_length},
         {"running", body.running},
         {"pending", body.pending}};
  return {MessageType::kHeartbeat, "", j.dump()};
}

Message ping_message(int64_t seq) {
  return {MessageType::kHeartbeat, "", json{{"seq", seq}}.dump()};
}

Message cancel_message(const std::string &id) { return {MessageType::kCancel, id, "{}"}; }

std::string client_routing_id(const std::string &client_tag, size_t link) {
  return "protuner-client-" + client_tag + "-" + std::to_string(link);
}

Message ready_message(const ReadyBody &body) {
  json j{{"heartbeat_ms", body.heartbeat_ms}, {"host", body.host}, {"instance", body.instance}};
  return {MessageType::kReady, "", j.dump()};
}

Message error_message(const std::string &id, const ErrorBody &body) {
  json j{{"error", body.error}, {"retry", body.retry}};
  return {MessageType::kError, id, j.dump()};
}

MeasureRequest read_measure(const Message &message) {
  expect_type(message, MessageType::kMeasure);
  try {
    return request_from_json(message.body);
  } catch (const Error &e) {
    throw WireError(std::string("bad measure request '") + message.id + "': " + e.what(),
                    message.id);
  }
}

MeasureResult read_result(const Message &message) {
  expect_type(message, MessageType::kResult);
  try {
    return result_from_json(message.body);
  } catch (const Error &e) {
    throw WireError(std::string("bad result for '") + message.id + "': " + e.what(), message.id);
  }
}

HeartbeatBody read_heartbeat(const Message &message) {
  expect_type(message, MessageType::kHeartbeat);
  const json j = parse_object(message.body, "heartbeat body", message.id);
  HeartbeatBody b;
  // A ping has at most its sequence number; a daemon's heartbeat carries every field.
  if (j.empty()) return b;
  b.seq = seq_field(j, message.id);
  if (j.size() == 1) return b;
  b.busy = bool_field(j, "busy", "heartbeat", message.id);
  b.queue_length = int_field(j, "queue_length", "heartbeat", message.id);
  b.running = string_field(j, "running", "heartbeat", message.id);
  const json &pending = field(j, "pending", "heartbeat", message.id);
  if (!pending.is_array()) throw WireError("heartbeat body: 'pending' must be an array", message.id);
  for (const json &p : pending) {
    if (!p.is_string()) throw WireError("heartbeat body: 'pending' must hold strings", message.id);
    b.pending.push_back(p.get<std::string>());
  }
  return b;
}

ReadyBody read_ready(const Message &message) {
  expect_type(message, MessageType::kReady);
  const json j = parse_object(message.body, "ready body", message.id);
  ReadyBody b;
  b.heartbeat_ms = int_field(j, "heartbeat_ms", "ready", message.id);
  b.host = string_field(j, "host", "ready", message.id);
  b.instance = string_field(j, "instance", "ready", message.id);
  return b;
}

ErrorBody read_error(const Message &message) {
  expect_type(message, MessageType::kError);
  const json j = parse_object(message.body, "error body", message.id);
  ErrorBody b;
  b.error = string_field(j, "error", "error", message.id);
  b.retry = bool_field(j, "retry", "error", message.id);
  return b;
}

}  // namespace protuner::wire
