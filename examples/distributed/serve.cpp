#include "distributed/serve.hpp"

#include <unistd.h>

#include <optional>
#include <utility>

#include "distributed/wire.hpp"

namespace tc {

namespace {

/// How long a rank waits for more candidates once one has come before it measures: rank 0 sends a
/// rank's whole queue at once, and a rank measures what it holds together.
constexpr double kGatherSeconds = 0.002;

/// The next message rank 0 sends within `timeout_seconds`, or none (nothing came, or something
/// from another rank or that does not decode).
std::optional<Message> next_from_rank0(Transport& transport, double timeout_seconds) {
  std::optional<Envelope> e = transport.receive(timeout_seconds);
  if (!e || e->from != 0) return std::nullopt;
  collage::Result<Message> m = decode(e->bytes);
  if (!m.ok()) return std::nullopt;
  return std::move(m).value();
}

}  // namespace

std::string host_name() {
  char name[256] = {};
  if (::gethostname(name, sizeof name - 1) != 0) return "";
  return name;
}

ServeEnd serve(Transport& transport, const MeasurerFactory& make, double silence_timeout_seconds, std::string* why) {
  std::unique_ptr<Measurer> measurer;
  std::string setup_error = "no setup came from rank 0";
  std::optional<Message> held;  // one that came while candidates were gathered, taken up next
  for (;;) {
    std::optional<Message> m = std::move(held);
    held.reset();
    if (!m) m = next_from_rank0(transport, 0.1);
    if (!m) {
      if (const double s = transport.silence(0); s > silence_timeout_seconds) {
        if (why) *why = "rank 0 was silent for " + std::to_string(static_cast<int>(s)) + " s; giving up";
        return ServeEnd::rank0_lost;
      }
      continue;
    }
    Message reply;
    switch (m->kind) {
      case MessageKind::setup: {
        collage::Result<std::unique_ptr<Measurer>> made = make(m->text);
        reply.host = host_name();
        if (made.ok()) {
          measurer = std::move(made).value();
          reply.kind = MessageKind::ready;
          reply.text = measurer->identity();
        } else {
          setup_error = made.error().message;
          reply.kind = MessageKind::refuse;
          reply.text = setup_error;
        }
        break;
      }
      case MessageKind::measure: {
        std::vector<Message> batch{std::move(*m)};
        while (std::optional<Message> more = next_from_rank0(transport, kGatherSeconds)) {
          if (more->kind != MessageKind::measure) {
            held = std::move(more);
            break;
          }
          batch.push_back(std::move(*more));
        }
        std::vector<std::string> records;
        records.reserve(batch.size());
        for (Message& b : batch) records.push_back(std::move(b.text));
        std::vector<collage::Result<collage::Measurement>> answers;
        if (measurer) answers = measurer->measure_batch(records);
        const collage::Error missing{collage::ErrorCode::oracle, measurer ? "the rank gave no answer" : setup_error};
        for (std::size_t k = 0; k < batch.size(); ++k) {
          transport.send(0, encode(answer_message(batch[k].seq, k < answers.size() ? answers[k] : missing)));
        }
        continue;
      }
      case MessageKind::stop:
        reply.kind = MessageKind::bye;
        transport.send(0, encode(reply));
        return ServeEnd::stopped;
      default: continue;
    }
    transport.send(0, encode(reply));
  }
}

}  // namespace tc
