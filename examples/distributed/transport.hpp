#pragma once

/// \file
/// Transport: how the ranks of one distributed run (rank 0 drives, the others measure) pass
/// messages, and how long each has been silent. MpiTransport is the one collage-run uses; the
/// tests also run the protocol over threads in one process.

#include <optional>
#include <string>

namespace tc {

/// A message and the rank it came from.
struct Envelope {
  int from = 0;
  std::string bytes;
};

/// Messages between the ranks of one run. send() never blocks; receive() waits at most as long
/// as it is told. A transport keeps each rank's silence (time since anything came from it) low by
/// itself while the rank lives, with heartbeats between rank 0 and every other rank sent from
/// its own thread, so silence() grows only when a rank is dead, stuck beyond its transport, or
/// cut off.
class Transport {
 public:
  virtual ~Transport() = default;
  /// This process's rank, 0 to size() - 1.
  virtual int rank() const = 0;
  /// The number of ranks.
  virtual int size() const = 0;
  /// Queues `bytes` for rank `to`.
  virtual void send(int to, std::string bytes) = 0;
  /// The next message from any rank, waiting up to `max_wait_seconds`; nothing when none came.
  virtual std::optional<Envelope> receive(double max_wait_seconds) = 0;
  /// Seconds since anything (a message or a heartbeat) last came from rank `from`.
  virtual double silence(int from) const = 0;

 protected:
  Transport() = default;
  Transport(const Transport&) = default;
  Transport& operator=(const Transport&) = default;
};

}  // namespace tc
