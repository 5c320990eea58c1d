#pragma once

/// \file
/// The messages of a distributed run and their bytes. Rank 0 sends `setup` (what to measure with:
/// opaque to this layer), then `measure` (a candidate as a trace record) and finally `stop`; a
/// serving rank answers `ready` (its identity and host) or `refuse` (why it cannot serve), an
/// `answer` per candidate and `bye`. Heartbeats are the transport's own.

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include <collage/cost/cost_oracle.hpp>
#include <collage/support/result.hpp>

namespace tc {

/// What a message is.
enum class MessageKind : std::uint8_t { setup = 1, ready, refuse, measure, answer, stop, bye };

/// One message. Which fields mean something depends on the kind (see the file comment).
struct Message {
  MessageKind kind = MessageKind::stop;
  /// The candidate's number (measure, answer): rank 0 numbers every candidate it sends.
  std::uint64_t seq = 0;
  /// setup: the payload; ready: the identity the rank measures under; refuse: why; measure: the
  /// candidate's trace record; answer: the error, when `ok` is false.
  std::string text;
  /// ready: the rank's host name.
  std::string host;
  /// answer: whether `measurement` holds the answer (else `text` says what failed).
  bool ok = false;
  /// answer: the measurement, bit for bit.
  collage::Measurement measurement;
};

/// `m` as bytes.
std::string encode(const Message& m);

/// The message `bytes` hold, or an Error (ErrorCode::parse) when they are not one.
collage::Result<Message> decode(std::string_view bytes);

/// The answer message for candidate `seq`.
Message answer_message(std::uint64_t seq, const collage::Result<collage::Measurement>& answer);

/// What an answer message says: its measurement, or an Error (ErrorCode::oracle) with its text.
collage::Result<collage::Measurement> answer_of(const Message& m);

/// `fields` as one string (e.g. a setup payload), any bytes in each.
std::string pack(const std::vector<std::string>& fields);

/// The fields pack() wrote as `bytes`, or an Error (ErrorCode::parse).
collage::Result<std::vector<std::string>> unpack(std::string_view bytes);

}  // namespace tc
