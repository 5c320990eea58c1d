#include "distributed/serve.hpp"

#include <unistd.h>

#include <optional>

#include "distributed/wire.hpp"

namespace tc {

std::string host_name() {
  char name[256] = {};
  if (::gethostname(name, sizeof name - 1) != 0) return "";
  return name;
}

ServeEnd serve(Transport& transport, const MeasurerFactory& make, double silence_timeout_seconds, std::string* why) {
  std::unique_ptr<Measurer> measurer;
  std::string setup_error = "no setup came from rank 0";
  for (;;) {
    std::optional<Envelope> e = transport.receive(0.1);
    if (!e) {
      if (const double s = transport.silence(0); s > silence_timeout_seconds) {
        if (why) *why = "rank 0 was silent for " + std::to_string(static_cast<int>(s)) + " s; giving up";
        return ServeEnd::rank0_lost;
      }
      continue;
    }
    if (e->from != 0) continue;
    collage::Result<Message> m = decode(e->bytes);
    if (!m.ok()) continue;
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
      case MessageKind::measure:
        reply = answer_message(m->seq, measurer ? measurer->measure(m->text)
                                                : collage::Result<collage::Measurement>(
                                                      collage::Error{collage::ErrorCode::oracle, setup_error}));
        break;
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
