// LIST answers written from the stored texts (stored_json.h, ApiServer::serveStoredList): the
// same objects as decoding each one (GET too), with resourceVersion, pagination, selectors, Table
// output and objects stored in another version or shape as before.
#include <gtest/gtest.h>

#include <algorithm>
#include <future>
#include <set>
#include <thread>

#include "apiserver/stored_json.h"
#include "client/rest_client.h"
#include "common/http_client.h"
#include "in_process_api_server.h"

namespace minik8s::apiserver {
namespace {

// What decoding, setting the resourceVersion and labelling gives (the long way).
std::string decodedText(const json& stored, int64_t rv) {
  json obj = stored;
  obj["metadata"]["resourceVersion"] = std::to_string(rv);
  return obj.dump(-1, ' ', false, json::error_handler_t::replace);
}

std::string served(const std::string& stored, int64_t rv, const std::string& apiVersion = "v1",
                   const std::string& kind = "Pod") {
  std::string out = "prefix:";
  if (!appendServedText(out, stored, rv, apiVersion, kind)) return "<refused>";
  return out.substr(7);
}

TEST(StoredJsonTest, PatchedTextIsTheDecodedObjectEncodedAgain) {
  const std::vector<json> objects = {
      {{"apiVersion", "v1"}, {"kind", "Pod"}, {"metadata", json::object()}},
      {{"apiVersion", "v1"}, {"kind", "Pod"}, {"metadata", {{"name", "a"}}}},
      {{"apiVersion", "v1"}, {"kind", "Pod"}, {"metadata", {{"uid", "u"}}}},
      {{"apiVersion", "v1"},
       {"kind", "Pod"},
       {"metadata",
        {{"name", "web"},
         {"namespace", "default"},
         {"labels", {{"a}b", "{\"x\":[1,2]}"}, {"quote\"d", "back\\slash"}}},
         {"annotations", {{"k", "caf\u00e9 \u2603 \n\t"}}},
         {"uid", "1234"},
         {"selfLinkish", 1.5}}},
       {"spec", {{"containers", {{{"name", "c"}, {"args", {"]", "}", "\"", "\\"}}}}}}},
       {"status", {{"phase", "Running"}, {"n", -3}, {"ok", true}, {"none", nullptr}}}},
      {{"metadata", {{"name", "first"}}}, {"apiVersion", "v1"}, {"kind", "Pod"}, {"zz", {1, 2}}},
      // Quotes after runs of backslashes (the end of a string is a quote after an even run).
      {{"apiVersion", "v1"},
       {"kind", "Pod"},
       {"metadata",
        {{"annotations", {{"\\", "\\\\"}, {"a\\\"", "\\\"\\"}, {"x", "\"\"\\\\\""}}},
         {"name", "b"}}}},
  };
  for (const auto& obj : objects) {
    EXPECT_EQ(served(obj.dump(), 42), decodedText(obj, 42)) << obj.dump();
  }
}

TEST(StoredJsonTest, RefusesTextsItCannotPatch) {
  // No apiVersion or kind (written by the server itself), another kind or version.
  EXPECT_EQ(served(R"({"metadata":{"name":"a"}})", 1), "<refused>");
  EXPECT_EQ(served(R"({"apiVersion":"v1","metadata":{"name":"a"}})", 1), "<refused>");
  EXPECT_EQ(served(R"({"apiVersion":"v1","kind":"Pod","metadata":{}})", 1, "v2"), "<refused>");
  EXPECT_EQ(served(R"({"apiVersion":"v1","kind":"Node","metadata":{}})", 1), "<refused>");
  // No metadata, metadata not an object, a resourceVersion already there.
  EXPECT_EQ(served(R"({"apiVersion":"v1","kind":"Pod"})", 1), "<refused>");
  EXPECT_EQ(served(R"({"apiVersion":"v1","kind":"Pod","metadata":3})", 1), "<refused>");
  EXPECT_EQ(served(R"({"apiVersion":"v1","kind":"Pod","metadata":{"resourceVersion":"1"}})", 1),
            "<refused>");
  // Not compact or not JSON at all.
  EXPECT_EQ(served(R"({"apiVersion": "v1","kind":"Pod","metadata":{}})", 1), "<refused>");
  EXPECT_EQ(served(R"({"apiVersion":"v1","kind":"Pod","metadata":{}}x)", 1), "<refused>");
  EXPECT_EQ(served(R"({"apiVersion":"v1","kind":"Pod","metadata":{"a":"b)", 1), "<refused>");
  // Read up to metadata only (sorted keys), but still one object with members after it.
  EXPECT_EQ(served(R"({"apiVersion":"v1","kind":"Pod","metadata":{}x"spec":{}})", 1), "<refused>");
  EXPECT_EQ(served(R"({"apiVersion":"v1","kind":"Pod","metadata":{},"spec":1)", 1), "<refused>");
  EXPECT_EQ(served("", 1), "<refused>");
  EXPECT_EQ(served("not json", 1), "<refused>");
}

class StoredListTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_TRUE(server_.start().ok());
    rest_ = std::make_unique<client::RestClient>(server_.url());
    for (int i = 0; i < 7; ++i) {
      json pod = {{"apiVersion", "v1"},
                  {"kind", "Pod"},
                  {"metadata",
                   {{"name", "pod-" + std::to_string(i)},
                    {"labels", {{"even", i % 2 == 0 ? "yes" : "no"}}}}},
                  {"spec", {{"containers", {{{"name", "c"}, {"image", "busybox"}}}}}}};
      ASSERT_TRUE(rest_->request("POST", kPods, pod.dump()).ok());
    }
  }
  void TearDown() override { server_.stop(); }

  json get(const std::string& path, const std::string& accept = "*/*") {
    auto r = rest_->requestText("GET", path, "", "application/json", accept);
    EXPECT_TRUE(r.ok()) << path << ": " << r.status().toString();
    return r.ok() ? json::parse(*r) : json();
  }

  // Creates `n` pods named prefix-0.. with an annotation of `fillerBytes` each.
  void createFilledPods(const std::string& prefix, int n, size_t fillerBytes) {
    for (int i = 0; i < n; ++i) {
      json pod = {{"apiVersion", "v1"},
                  {"kind", "Pod"},
                  {"metadata",
                   {{"name", prefix + "-" + std::to_string(i)},
                    {"annotations",
                     {{"filler", std::string(fillerBytes, static_cast<char>('a' + i % 26))}}}}},
                  {"spec", {{"containers", {{{"name", "c"}, {"image", "busybox"}}}}}}};
      ASSERT_TRUE(rest_->request("POST", kPods, pod.dump()).ok());
    }
  }

  static constexpr const char* kPods = "/api/v1/namespaces/default/pods";
  testing::InProcessApiServer server_;
  std::unique_ptr<client::RestClient> rest_;
};

TEST_F(StoredListTest, ListedItemsAreTheObjectsAGetAnswers) {
  json list = get(kPods);
  EXPECT_EQ(list["kind"], "PodList");
  EXPECT_EQ(list["apiVersion"], "v1");
  ASSERT_EQ(list["items"].size(), 7u);
  int64_t newest = 0;
  for (const auto& item : list["items"]) {
    const std::string name = item["metadata"]["name"];
    EXPECT_EQ(item, get(std::string(kPods) + "/" + name)) << name;
    newest = std::max<int64_t>(newest,
                               std::stoll(item["metadata"]["resourceVersion"].get<std::string>()));
  }
  EXPECT_GE(std::stoll(list["metadata"]["resourceVersion"].get<std::string>()), newest);
  EXPECT_FALSE(list["metadata"].contains("continue"));

  // A write is in the next list.
  json changed = get(std::string(kPods) + "/pod-3");
  changed["metadata"]["labels"]["changed"] = "yes";
  ASSERT_TRUE(rest_->request("PUT", std::string(kPods) + "/pod-3", changed.dump()).ok());
  json after = get(kPods);
  EXPECT_EQ(after["items"][3]["metadata"]["labels"]["changed"], "yes");
  EXPECT_EQ(after["items"][3], get(std::string(kPods) + "/pod-3"));
}

// The answers of writes (create, update, patch, a status patch) are written from the text the
// write stored: the same bytes a GET answers right after, warnings and Table output as before.
TEST_F(StoredListTest, WriteAnswersAreTheStoredObjects) {
  const std::string pod = std::string(kPods) + "/w";
  auto text = [&](const std::string& method, const std::string& path, const std::string& body,
                  const std::string& contentType = "application/json") {
    auto r = rest_->requestText(method, path, body, contentType, "application/json");
    EXPECT_TRUE(r.ok()) << method << " " << path << ": " << r.status().toString();
    return r.ok() ? *r : std::string();
  };
  auto getText = [&](const std::string& path) { return text("GET", path, ""); };
  json body = {{"apiVersion", "v1"},
               {"kind", "Pod"},
               {"metadata", {{"name", "w"}}},
               {"spec", {{"containers", {{{"name", "c"}, {"image", "busybox"}}}}}}};
  const std::string created = text("POST", kPods, body.dump());
  EXPECT_EQ(created, getText(pod));
  EXPECT_EQ(json::parse(created).dump(), created);  // compact, sorted: as encoding it gives
  EXPECT_FALSE(json::parse(created)["metadata"]["resourceVersion"].get<std::string>().empty());

  json changed = json::parse(created);
  changed["metadata"]["labels"]["x"] = "1";
  const std::string updated = text("PUT", pod, changed.dump());
  EXPECT_EQ(updated, getText(pod));
  EXPECT_NE(updated, created);

  const std::string patched =
      text("PATCH", pod, R"({"metadata":{"labels":{"y":"2"}}})", "application/merge-patch+json");
  EXPECT_EQ(patched, getText(pod));
  EXPECT_EQ(json::parse(patched)["metadata"]["labels"]["y"], "2");

  const std::string status = text("PATCH", pod + "/status", R"({"status":{"phase":"Running"}})",
                                  "application/merge-patch+json");
  EXPECT_EQ(status, getText(pod));
  EXPECT_EQ(json::parse(status)["status"]["phase"], "Running");

  // A dry run stores nothing: its answer is encoded as before, without a resourceVersion.
  json other = body;
  other["metadata"]["name"] = "dry";
  json dry = json::parse(text("POST", std::string(kPods) + "?dryRun=All", other.dump()));
  EXPECT_EQ(dry["metadata"]["name"], "dry");
  EXPECT_FALSE(dry["metadata"].contains("resourceVersion"));
  EXPECT_FALSE(rest_->request("GET", std::string(kPods) + "/dry", "").ok());

  // Table output of a write is still a Table.
  other["metadata"]["name"] = "t";
  auto table = rest_->requestText("POST", kPods, other.dump(), "application/json",
                                  "application/json;as=Table;v=v1;g=meta.k8s.io");
  ASSERT_TRUE(table.ok()) << table.status().toString();
  EXPECT_EQ(json::parse(*table)["kind"], "Table");
}

// A list larger than the HTTP server writes in one piece (its body goes out in place, not copied
// into one buffer with the header) is the same answer, its Content-Length its size.
TEST_F(StoredListTest, ALargeListIsTheSameAnswer) {
  createFilledPods("big", 60, 2048);
  if (HasFatalFailure()) return;
  http::Client c(server_.url());
  auto r = c.get(kPods);
  ASSERT_TRUE(r.ok()) << r.status().toString();
  ASSERT_EQ(r->status, 200);
  EXPECT_GT(r->body.size(), 128u * 1024);
  bool lengthSeen = false;
  for (const auto& [k, v] : r->headers) {
    if (k == "Content-Length" || k == "content-length") {
      lengthSeen = true;
      EXPECT_EQ(v, std::to_string(r->body.size()));
    }
  }
  EXPECT_TRUE(lengthSeen);
  json list = json::parse(r->body);
  ASSERT_EQ(list["items"].size(), 67u);
  EXPECT_EQ(list.dump(), r->body);  // compact and sorted, as encoding the list gives
  for (const auto& item : list["items"]) {
    EXPECT_EQ(item, get(std::string(kPods) + "/" + item["metadata"]["name"].get<std::string>()));
  }
}

// A list over 1 MiB is streamed (chunked, written as it is built): the same bytes, read the same
// by the client library; pages of it with limit and continue are the same items.
TEST_F(StoredListTest, AListOverAMegabyteIsStreamedAndTheSameAnswer) {
  createFilledPods("huge", 150, 8192);
  if (HasFatalFailure()) return;
  http::Client c(server_.url());
  auto r = c.get(kPods);
  ASSERT_TRUE(r.ok()) << r.status().toString();
  ASSERT_EQ(r->status, 200);
  EXPECT_GT(r->body.size(), 1024u * 1024);
  bool chunked = false;
  for (const auto& [k, v] : r->headers) {
    EXPECT_NE(k == "Content-Length" || k == "content-length", true);
    if ((k == "Transfer-Encoding" || k == "transfer-encoding") && v == "chunked") chunked = true;
  }
  EXPECT_TRUE(chunked);
  json list = json::parse(r->body);
  ASSERT_EQ(list["items"].size(), 157u);
  EXPECT_EQ(list.dump(), r->body);  // compact and sorted, as encoding the list gives
  EXPECT_EQ(get(kPods), list);      // the client library reads the stream

  // Pages of it (the first ones streamed too) are the same items in order.
  json paged = json::array();
  std::string token;
  do {
    json p = get(std::string(kPods) + "?limit=100" + (token.empty() ? "" : "&continue=" + token));
    for (auto& item : p["items"]) paged.push_back(item);
    token = p["metadata"].value("continue", "");
  } while (!token.empty());
  EXPECT_EQ(paged, list["items"]);
}

// Events ready together are written as one chunk: the stream is still one complete event per
// line, each the object a GET answers at that revision, and every watcher gets the same bytes.
TEST_F(StoredListTest, WatchersGetTheSameLinesWhateverTheChunking) {
  const std::string rv = get(kPods)["metadata"]["resourceVersion"];
  constexpr int kWatchers = 3, kCreates = 40;
  std::vector<std::unique_ptr<http::Client>> clients;
  std::vector<std::string> bodies(kWatchers);
  std::vector<std::thread> threads;
  // Every client made before any thread reads `clients`: a push_back beside a running watcher
  // would move the vector it indexes.
  for (int i = 0; i < kWatchers; ++i)
    clients.push_back(std::make_unique<http::Client>(server_.url()));
  for (int i = 0; i < kWatchers; ++i) {
    threads.emplace_back([&, i] {
      int lines = 0;
      clients[i]->stream("GET", std::string(kPods) + "?watch=1&resourceVersion=" + rv,
                         [&](std::string_view chunk) {
                           bodies[i].append(chunk);
                           lines += std::count(chunk.begin(), chunk.end(), '\n');
                           return lines < kCreates;
                         });
    });
  }
  // Created from several threads at once, so that the store hands the cache batches.
  std::vector<std::thread> creators;
  for (int t = 0; t < 4; ++t) {
    creators.emplace_back([&, t] {
      client::RestClient rest(server_.url());
      for (int i = t; i < kCreates; i += 4) {
        json pod = {{"apiVersion", "v1"},
                    {"kind", "Pod"},
                    {"metadata", {{"name", "w-" + std::to_string(i)}}},
                    {"spec", {{"containers", {{{"name", "c"}, {"image", "busybox"}}}}}}};
        EXPECT_TRUE(rest.request("POST", kPods, pod.dump()).ok());
      }
    });
  }
  for (auto& t : creators) t.join();
  for (auto& t : threads) t.join();
  for (int i = 1; i < kWatchers; ++i) EXPECT_EQ(bodies[i], bodies[0]);
  std::set<std::string> names;
  size_t start = 0;
  for (size_t nl; (nl = bodies[0].find('\n', start)) != std::string::npos; start = nl + 1) {
    const std::string line = bodies[0].substr(start, nl - start);
    json ev = json::parse(line);
    EXPECT_EQ(ev.dump(), line);
    EXPECT_EQ(ev["type"], "ADDED");
    const std::string name = ev["object"]["metadata"]["name"];
    names.insert(name);
    EXPECT_EQ(ev["object"], get(std::string(kPods) + "/" + name)) << name;
  }
  EXPECT_EQ(start, bodies[0].size());  // nothing after the last line
  EXPECT_EQ(names.size(), static_cast<size_t>(kCreates));
}

// A watch with selectors sees an object enter its selection as ADDED, change inside it as
// MODIFIED and leave it as DELETED, by labels and by fields alike; the
// events a watch without selectors gets are unchanged.
TEST_F(StoredListTest, WatchSelectorsFollowObjectsInAndOutOfTheSelection) {
  const std::string rv = get(kPods)["metadata"]["resourceVersion"];
  auto watch = [&](const std::string& query, int want) {
    return std::async(std::launch::async, [this, query, want, rv] {
      http::Client c(server_.url());
      std::string body;
      int lines = 0;
      c.stream("GET", std::string(kPods) + "?watch=1&resourceVersion=" + rv + query,
               [&](std::string_view chunk) {
                 body.append(chunk);
                 lines += std::count(chunk.begin(), chunk.end(), '\n');
                 return lines < want;
               });
      std::vector<std::string> seen;
      size_t start = 0;
      for (size_t nl; (nl = body.find('\n', start)) != std::string::npos; start = nl + 1) {
        json ev = json::parse(body.substr(start, nl - start));
        const std::string type = ev["type"];
        const json& obj = ev["object"];
        seen.push_back(type == "DELETED"
                           ? type
                           : type + " " + obj["metadata"]["labels"].value("tier", "-") + " " +
                                 obj["spec"].value("restartPolicy", "-"));
      }
      return seen;
    });
  };
  auto byLabel = watch("&labelSelector=tier%3Dweb", 3);
  auto byField = watch("&fieldSelector=spec.restartPolicy%3DNever,metadata.name%3Dsel", 2);
  auto all = watch("", 5);
  // The watches start at rv: they get every event after it, whenever they open.
  auto pod = [](const std::string& tier, const std::string& policy) {
    return json{
        {"apiVersion", "v1"},
        {"kind", "Pod"},
        {"metadata", {{"name", "sel"}, {"labels", {{"tier", tier}}}}},
        {"spec",
         {{"restartPolicy", policy}, {"containers", {{{"name", "c"}, {"image", "busybox"}}}}}}};
  };
  const std::string path = std::string(kPods) + "/sel";
  auto patchLabel = [&](const std::string& tier) {
    return rest_->request("PATCH", path, json{{"metadata", {{"labels", {{"tier", tier}}}}}}.dump(),
                          "application/merge-patch+json");
  };
  ASSERT_TRUE(rest_->request("POST", kPods, pod("db", "Never").dump()).ok());
  ASSERT_TRUE(patchLabel("web").ok());
  ASSERT_TRUE(patchLabel("web2").ok());
  ASSERT_TRUE(patchLabel("web").ok());
  ASSERT_TRUE(rest_->request("DELETE", path).ok());
  EXPECT_EQ(byLabel.get(),
            (std::vector<std::string>{"ADDED web Never", "DELETED", "ADDED web Never"}));
  EXPECT_EQ(byField.get(), (std::vector<std::string>{"ADDED db Never", "MODIFIED web Never"}));
  EXPECT_EQ(all.get(),
            (std::vector<std::string>{"ADDED db Never", "MODIFIED web Never", "MODIFIED web2 Never",
                                      "MODIFIED web Never", "DELETED"}));
}

TEST_F(StoredListTest, PagesSelectorsAndTablesAsBefore) {
  std::vector<std::string> names;
  std::string cont;
  int pages = 0;
  do {
    json page = get(std::string(kPods) + "?limit=3" + (cont.empty() ? "" : "&continue=" + cont));
    for (const auto& item : page["items"]) names.push_back(item["metadata"]["name"]);
    cont = page["metadata"].value("continue", "");
    ++pages;
  } while (!cont.empty() && pages < 10);
  EXPECT_EQ(pages, 3);
  EXPECT_EQ(names, (std::vector<std::string>{"pod-0", "pod-1", "pod-2", "pod-3", "pod-4", "pod-5",
                                             "pod-6"}));

  json even =
      get(std::string(kPods) + "?labelSelector=even%3Dyes&fieldSelector=metadata.name!%3Dpod-0");
  ASSERT_EQ(even["items"].size(), 3u);
  EXPECT_EQ(even["items"][0]["metadata"]["name"], "pod-2");
  EXPECT_EQ(even["items"][0], get(std::string(kPods) + "/pod-2"));

  json table = get(kPods, "application/json;as=Table;v=v1;g=meta.k8s.io,application/json");
  EXPECT_EQ(table["kind"], "Table");
  EXPECT_EQ(table["rows"].size(), 7u);

  auto missing = rest_->request("GET", std::string(kPods) + "/nope", "");
  ASSERT_FALSE(missing.ok());
  EXPECT_EQ(missing.status().code(), 404);
  EXPECT_EQ(missing.status().message(), "pods \"nope\" not found");
  json podTable =
      get(std::string(kPods) + "/pod-1", "application/json;as=Table;v=v1;g=meta.k8s.io");
  EXPECT_EQ(podTable["kind"], "Table");
  EXPECT_EQ(podTable["rows"].size(), 1u);

  auto bad = rest_->request("GET", std::string(kPods) + "?continue=not-a-token", "");
  ASSERT_FALSE(bad.ok());
  EXPECT_EQ(bad.status().code(), 400);
}

TEST_F(StoredListTest, ObjectsStoredWithoutTheirKindAreServedTheLongWay) {
  // As an object the server wrote itself without apiVersion and kind.
  auto& store = server_.api().registry().store();
  ASSERT_TRUE(store
                  .create("/registry/core/pods/default/raw",
                          R"({"metadata":{"name":"raw","namespace":"default"},"spec":{}})")
                  .ok());
  json list = get(kPods);
  ASSERT_EQ(list["items"].size(), 8u);
  const json& raw = list["items"][7];
  EXPECT_EQ(raw["metadata"]["name"], "raw");
  EXPECT_EQ(raw["apiVersion"], "v1");
  EXPECT_EQ(raw["kind"], "Pod");
  EXPECT_FALSE(raw["metadata"]["resourceVersion"].get<std::string>().empty());
  EXPECT_EQ(raw, get(std::string(kPods) + "/raw"));
}

TEST_F(StoredListTest, ListsInAnotherVersionThanStoredAreConverted) {
  const std::string v2 = "/apis/autoscaling/v2/namespaces/default/horizontalpodautoscalers";
  const std::string v1 = "/apis/autoscaling/v1/namespaces/default/horizontalpodautoscalers";
  json hpa = {
      {"apiVersion", "autoscaling/v2"},
      {"kind", "HorizontalPodAutoscaler"},
      {"metadata", {{"name", "h"}}},
      {"spec",
       {{"scaleTargetRef", {{"apiVersion", "apps/v1"}, {"kind", "Deployment"}, {"name", "web"}}},
        {"minReplicas", 1},
        {"maxReplicas", 3},
        {"metrics",
         {{{"type", "Resource"},
           {"resource",
            {{"name", "cpu"},
             {"target", {{"type", "Utilization"}, {"averageUtilization", 50}}}}}}}}}}};
  ASSERT_TRUE(rest_->request("POST", v2, hpa.dump()).ok());
  json stored = get(v2);
  ASSERT_EQ(stored["items"].size(), 1u);
  EXPECT_EQ(stored["items"][0], get(v2 + "/h"));
  json old = get(v1);
  EXPECT_EQ(old["kind"], "HorizontalPodAutoscalerList");
  ASSERT_EQ(old["items"].size(), 1u);
  EXPECT_EQ(old["items"][0]["apiVersion"], "autoscaling/v1");
  EXPECT_EQ(old["items"][0]["spec"]["targetCPUUtilizationPercentage"], 50);
  EXPECT_EQ(old["items"][0], get(v1 + "/h"));
}

}  // namespace
}  // namespace minik8s::apiserver
