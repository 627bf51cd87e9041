// The farm's Redis layout, in one place: every key and stream the coordinator, searchers
// and measurers share, its type, who writes it and who reads it, and the schema version
// every record carries. A process built from another commit either reads the same layout
// or refuses it with a message naming the version, never misreads it.
//
// Every key starts with "protuner:v<kLayoutVersion>:", so two layouts never share a key;
// every record inside (a stream entry, a stored JSON document) also carries a "schema"
// field with the version that wrote it. The database itself records its layout version in
// kLayoutKey, written once by the first process that uses it.
//
//   key                                   type    writer              readers
//   protuner:layout                       string  first user (SETNX)  every process, at start
//   protuner:v1:library:<sha256>          string  submit              searchers, measurers
//   protuner:v1:suite:<id>                string  submit (once)       coordinator, status, report
//   protuner:v1:suites                    zset    submit              coordinator, status
//   protuner:v1:jobs                      stream  coordinator,        searchers (group "searchers")
//                                                 free searchers (app_join.h)
//   protuner:v1:jobs:reasons:<entry>      list    job queue           job queue (dead-lettering)
//   protuner:v1:jobs:dead                 stream  job queue           status, operators
//   protuner:v1:suite-state:<id>          hash    coordinator, cancel  coordinator, status, report
//   protuner:v1:app:<suite>:<app>         hash    coordinator, searchers  all (app_state.h)
//   protuner:v1:results:<suite>:<app>     hash    searchers           searchers (shared cache), report
//   protuner:v1:baselines:<suite>:<app>   hash    searchers           status, report
//   protuner:v1:jobs-done:<suite>:<app>   hash    searchers           coordinator, status
//   protuner:v1:progress:<suite>:<app>    hash    searchers           status, report
//   protuner:v1:best-history:<suite>:<app>  zset  searchers         free searchers (app_join.h)
//   protuner:v1:coordinator               string  coordinators        coordinators (the lease)
//   protuner:v1:measurer:<name>           hash    that measurer (expires)  searchers
//   protuner:v1:measurers                 zset    measurers           searchers (prune expired)
//   protuner:v1:measurement:<sha256>      string  searchers (SET NX)  searchers (farm-wide cache),
//                                                                     (measurement_cache.h)
//
// A suite record is JSON (suite_record.h), written once; the suites index scores each suite
// id by its submission time (unix ms). Stream entries hold two fields: "schema" (this version, decimal) and "job" (the job as
// JSON, job_record.h). The reasons list holds one line per delivery of that entry that
// ended without an ack (job_queue.h). A dead-letter entry holds "schema", "entry" (the
// original entry id), "job" (its raw text, possibly malformed), "deliveries", "consumer"
// (its last holder) and "reasons" (a JSON array of strings).
//
// A suite's state hash holds "schema", "phase" (queued: its jobs are in the queue; done;
// cancelled) and "finished_ms". The app hashes, their results, baselines and finished jobs
// are described field by field in app_state.h, the jobs' progress records in
// job_progress.h. The coordinator lease holds the active coordinator's name and expires
// unless renewed (coordinator_daemon.h). The measurer records and their index are
// described in measurer_registry.h.
//
// Libraries are stored content-addressed: the key is the SHA-256 of the file's bytes, so
// an app's identity everywhere is that hash, never a path, and a stored library is never
// overwritten with different bytes.
#pragma once

#include <string>

#include "common/errors.h"

namespace protuner {

class RedisClient;

namespace farm {

inline constexpr int kLayoutVersion = 1;
inline constexpr const char *kLayoutKey = "protuner:layout";

// A key or record written by a newer (or unknown) layout than this build reads.
class SchemaError : public Error {
 public:
  using Error::Error;
};

// "protuner:v1:" + rest.
std::string key(const std::string &rest);

std::string library_key(const std::string &sha256_hex);
std::string suite_key(const std::string &suite_id);
std::string suites_index();
std::string jobs_stream();
std::string jobs_dead_letter_stream();
std::string suite_state_key(const std::string &suite_id);
std::string coordinator_lease_key();
inline constexpr const char *kSearcherGroup = "searchers";

// Records this build's layout version in an empty database, or checks the recorded one:
// throws SchemaError naming both versions when the database holds another layout.
void check_layout(RedisClient &redis);

// Checks a record's "schema" field (decimal text): throws SchemaError naming `where` when
// it is missing, not a number, or not kLayoutVersion.
void check_record_schema(const std::string &schema_field, const std::string &where);

}  // namespace farm
}  // namespace protuner
