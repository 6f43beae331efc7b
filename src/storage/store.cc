#include "storage/store.h"

#include "storage/etcd/etcd_store.h"
#include "storage/instrumented_store.h"
#include "storage/sqlite/sqlite_store.h"

namespace minik8s::storage {

namespace {
constexpr char kAcceptedForms[] =
    "accepted forms: \"sqlite:///absolute/path.db\", a bare file path, or "
    "\"etcd://host:port[,host:port...]\"";

bool startsWith(const std::string& s, const std::string& prefix) {
  return s.compare(0, prefix.size(), prefix) == 0;
}
}  // namespace

Result<std::unique_ptr<Store>> openStore(const std::string& url) {
  std::string path;
  if (startsWith(url, "sqlite://")) {
    path = url.substr(std::string("sqlite://").size());
    if (path.empty() || path[0] != '/') {
      return Status::BadRequest("datastore URL \"" + url +
                                "\": a sqlite URL needs an absolute path; " + kAcceptedForms);
    }
  } else if (startsWith(url, "etcd://")) {
    auto store = etcd::EtcdStore::open(url.substr(std::string("etcd://").size()));
    if (!store.ok()) return store.status();
    return std::unique_ptr<Store>(
        std::make_unique<InstrumentedStore>(std::unique_ptr<Store>(std::move(store).value())));
  } else if (!url.empty() && url.find("://") == std::string::npos) {
    path = url;
  } else {
    return Status::BadRequest("unsupported datastore URL \"" + url + "\"; " + kAcceptedForms);
  }
  auto store = sqlite::SqliteStore::open(path);
  if (!store.ok()) return store.status();
  return std::unique_ptr<Store>(
      std::make_unique<InstrumentedStore>(std::unique_ptr<Store>(std::move(store).value())));
}

}  // namespace minik8s::storage
