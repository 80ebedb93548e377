// OtlpReceiver: a test OTLP/HTTP trace receiver on 127.0.0.1. It accepts
// POST /v1/traces with a JSON ExportTraceServiceRequest, checks its shape
// strictly (StrictOtlpErrors) and keeps every request's body and headers;
// a malformed request is answered 400 and counted in errors(). `fail_next`
// answers the next N requests with `fail_status` (retry tests).
//
// Thread safety: the server runs on its own thread; the accessors lock.
#pragma once

#include <httplib.h>

#include <atomic>
#include <mutex>
#include <regex>
#include <string>
#include <thread>
#include <vector>

#include "core/json.h"

namespace maestro::testing {

// Everything wrong with `body` as an OTLP JSON trace export; empty = valid.
inline std::vector<std::string> StrictOtlpErrors(const Json& body) {
  std::vector<std::string> err;
  auto fail = [&](const std::string& what) { err.push_back(what); };
  static const std::regex trace_re("^[0-9a-f]{32}$"), span_re("^[0-9a-f]{16}$"),
      nano_re("^[0-9]{1,20}$"), int_re("^-?[0-9]{1,20}$");
  auto check_value = [&](const Json& v, const std::string& where, auto&& self) -> void {
    if (!v.is_object() || v.size() != 1) return fail(where + ": AnyValue must have one field");
    const std::string k = v.begin().key();
    const Json& x = v.begin().value();
    if (k == "stringValue" && x.is_string()) return;
    if (k == "boolValue" && x.is_boolean()) return;
    if (k == "doubleValue" && x.is_number()) return;
    if (k == "intValue" && x.is_string() && std::regex_match(x.get<std::string>(), int_re)) return;
    if (k == "arrayValue" && x.is_object() && x.contains("values") && x["values"].is_array()) {
      for (const auto& e : x["values"]) self(e, where + "[]", self);
      return;
    }
    fail(where + ": bad AnyValue " + v.dump());
  };
  auto check_attrs = [&](const Json& attrs, const std::string& where) {
    if (!attrs.is_array()) return fail(where + ": attributes must be an array");
    for (const auto& a : attrs) {
      if (!a.is_object() || !a.contains("key") || !a["key"].is_string() || !a.contains("value")) {
        fail(where + ": attribute needs key and value: " + a.dump());
        continue;
      }
      check_value(a["value"], where + "." + a["key"].get<std::string>(), check_value);
    }
  };
  auto hex = [&](const Json& v, const std::regex& re) {
    return v.is_string() && std::regex_match(v.get<std::string>(), re);
  };
  if (!body.is_object() || !body.contains("resourceSpans") || !body["resourceSpans"].is_array()) {
    fail("resourceSpans must be an array");
    return err;
  }
  for (const auto& rs : body["resourceSpans"]) {
    if (!rs.contains("resource") || !rs["resource"].contains("attributes")) {
      fail("resource.attributes missing");
    } else {
      check_attrs(rs["resource"]["attributes"], "resource");
    }
    if (!rs.contains("scopeSpans") || !rs["scopeSpans"].is_array()) {
      fail("scopeSpans must be an array");
      continue;
    }
    for (const auto& ss : rs["scopeSpans"]) {
      if (!ss.contains("scope") || !ss["scope"].value("name", Json()).is_string()) {
        fail("scope.name missing");
      }
      if (!ss.contains("spans") || !ss["spans"].is_array()) {
        fail("spans must be an array");
        continue;
      }
      for (const auto& s : ss["spans"]) {
        const std::string name = s.value("name", "");
        if (name.empty()) fail("span without name");
        if (!hex(s.value("traceId", Json()), trace_re)) fail(name + ": traceId");
        if (!hex(s.value("spanId", Json()), span_re)) fail(name + ": spanId");
        if (s.contains("parentSpanId") && !hex(s["parentSpanId"], span_re)) {
          fail(name + ": parentSpanId");
        }
        if (!hex(s.value("startTimeUnixNano", Json()), nano_re) ||
            !hex(s.value("endTimeUnixNano", Json()), nano_re)) {
          fail(name + ": times must be decimal strings");
        } else if (std::stoull(s["endTimeUnixNano"].get<std::string>()) <
                   std::stoull(s["startTimeUnixNano"].get<std::string>())) {
          fail(name + ": ends before it starts");
        }
        const int kind = s.value("kind", -1);
        if (kind < 1 || kind > 5) fail(name + ": kind");
        check_attrs(s.value("attributes", Json()), name);
        for (const auto& e : s.value("events", Json::array())) {
          if (!e.value("name", Json()).is_string() ||
              !hex(e.value("timeUnixNano", Json()), nano_re)) {
            fail(name + ": event " + e.dump());
          }
          check_attrs(e.value("attributes", Json::array()), name + " event");
        }
        for (const auto& l : s.value("links", Json::array())) {
          if (!hex(l.value("traceId", Json()), trace_re) ||
              !hex(l.value("spanId", Json()), span_re)) {
            fail(name + ": link " + l.dump());
          }
        }
        const Json& st = s.value("status", Json());
        if (!st.is_object() || !st.contains("code") || !st["code"].is_number_integer() ||
            st["code"].get<int>() < 0 || st["code"].get<int>() > 2) {
          fail(name + ": status");
        }
      }
    }
  }
  return err;
}

class OtlpReceiver {
 public:
  struct Request {
    std::string body;
    std::string content_type;
    std::map<std::string, std::string> headers;
  };

  OtlpReceiver() {
    server_.Post("/v1/traces", [this](const httplib::Request& req, httplib::Response& res) {
      Request r{req.body, req.get_header_value("Content-Type"), {}};
      for (const auto& [k, v] : req.headers) r.headers[k] = v;
      {
        std::lock_guard<std::mutex> lock(mu_);
        if (fail_next_ > 0) {
          --fail_next_;
          ++failed_;
          res.status = fail_status_;
          return;
        }
      }
      Json body = Json::parse(req.body, nullptr, false);
      std::vector<std::string> errors =
          body.is_discarded() ? std::vector<std::string>{"not JSON"} : StrictOtlpErrors(body);
      std::lock_guard<std::mutex> lock(mu_);
      if (!errors.empty() || r.content_type != "application/json") {
        for (auto& e : errors) errors_.push_back(std::move(e));
        if (r.content_type != "application/json")
          errors_.push_back("content type " + r.content_type);
        res.status = 400;
        return;
      }
      requests_.push_back(std::move(r));
      res.set_content("{}", "application/json");
    });
    port_ = server_.bind_to_any_port("127.0.0.1");
    thread_ = std::thread([this] { server_.listen_after_bind(); });
    while (!server_.is_running()) std::this_thread::sleep_for(std::chrono::milliseconds(5));
    // is_running() turns true before httplib starts its worker pool; one
    // answered request means the pool's threads exist, so tests that count
    // the process's threads see a settled number once this returns.
    httplib::Client probe("127.0.0.1", port_);
    (void)probe.Get("/");
  }
  ~OtlpReceiver() {
    server_.stop();
    if (thread_.joinable()) thread_.join();
  }

  int port() const { return port_; }
  std::string endpoint() const { return "http://127.0.0.1:" + std::to_string(port_); }
  void FailNext(int n, int status) {
    std::lock_guard<std::mutex> lock(mu_);
    fail_next_ = n;
    fail_status_ = status;
  }
  std::vector<Request> requests() const {
    std::lock_guard<std::mutex> lock(mu_);
    return requests_;
  }
  std::vector<std::string> errors() const {
    std::lock_guard<std::mutex> lock(mu_);
    return errors_;
  }
  int failed() const {
    std::lock_guard<std::mutex> lock(mu_);
    return failed_;
  }
  // Every span received so far, in arrival order.
  Json Spans() const {
    Json out = Json::array();
    for (const auto& r : requests()) {
      Json body = Json::parse(r.body);
      for (const auto& rs : body["resourceSpans"]) {
        for (const auto& ss : rs["scopeSpans"]) {
          for (const auto& s : ss["spans"]) out.push_back(s);
        }
      }
    }
    return out;
  }
  // All request bodies joined (for "no content leaked" checks).
  std::string AllBodies() const {
    std::string all;
    for (const auto& r : requests()) all += r.body + "\n";
    return all;
  }

 private:
  httplib::Server server_;
  int port_ = 0;
  std::thread thread_;
  mutable std::mutex mu_;
  std::vector<Request> requests_;
  std::vector<std::string> errors_;
  int fail_next_ = 0, fail_status_ = 503, failed_ = 0;
};

// The value of attribute `key` of an OTLP span/event (its AnyValue), or null.
inline Json OtlpAttr(const Json& span, const std::string& key) {
  for (const auto& a : span.value("attributes", Json::array())) {
    if (a["key"] == key) return a["value"];
  }
  return Json();
}

}  // namespace maestro::testing
