#include "costing/measurement_database.hpp"

#include "costing/sqlite_store.hpp"
#if TC_HAVE_POSTGRES
#include "costing/postgres_store.hpp"
#endif

namespace tc {

bool is_postgres_url(std::string_view where) {
  return where.rfind("postgresql://", 0) == 0 || where.rfind("postgres://", 0) == 0;
}

bool have_postgres() { return TC_HAVE_POSTGRES != 0; }

collage::Result<std::unique_ptr<MeasurementDatabase>> open_measurement_database(const std::string& where) {
  if (is_postgres_url(where)) {
#if TC_HAVE_POSTGRES
    auto store = PostgresMeasurementStore::open(where);
    if (!store.ok()) return store.error();
    return std::unique_ptr<MeasurementDatabase>(std::move(store).value());
#else
    return collage::Error{collage::ErrorCode::invalid_argument,
                          "measurement database: this build has no PostgreSQL support (libpq was not found when it "
                          "was built; install libpq-dev and rebuild)"};
#endif
  }
  auto store = SqliteMeasurementStore::open(where);
  if (!store.ok()) return store.error();
  return std::unique_ptr<MeasurementDatabase>(std::make_unique<SqliteMeasurementStore>(std::move(store).value()));
}

}  // namespace tc
