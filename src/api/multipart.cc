#include "api/multipart.h"

#include <map>

#include "core/strings.h"

namespace maestro::api {

namespace {

constexpr size_t kMaxHeaderBytes = 8 * 1024;
constexpr size_t kMaxBoundary = 70;

Status Malformed(const std::string& why) {
  return InvalidArgument("malformed multipart body: " + why, "body");
}

char Lower(char c) { return c >= 'A' && c <= 'Z' ? static_cast<char>(c - 'A' + 'a') : c; }

std::string LowerCopy(std::string_view s) {
  std::string out(s);
  for (char& c : out) c = Lower(c);
  return out;
}

bool TokenChar(char c) {
  const unsigned char u = static_cast<unsigned char>(c);
  if (u <= 32 || u >= 127) return false;
  return std::string_view("()<>@,;:\\\"/[]?={}").find(c) == std::string_view::npos;
}

// A header value `type; key=value; key="quoted"`: the lowercased type and
// the parameters (keys lowercased). nullopt when it does not parse.
struct HeaderValue {
  std::string type;
  std::map<std::string, std::string> params;
};

std::optional<HeaderValue> ParseHeaderValue(std::string_view v) {
  HeaderValue out;
  size_t semi = v.find(';');
  out.type = LowerCopy(Trim(v.substr(0, semi), kHttpSpace));
  if (out.type.empty()) return std::nullopt;
  size_t i = semi == std::string_view::npos ? v.size() : semi + 1;
  while (i < v.size()) {
    while (i < v.size() && (v[i] == ' ' || v[i] == '\t')) ++i;
    size_t key_start = i;
    while (i < v.size() && TokenChar(v[i])) ++i;
    std::string key = LowerCopy(v.substr(key_start, i - key_start));
    if (key.empty() || i >= v.size() || v[i] != '=') return std::nullopt;
    ++i;
    std::string value;
    if (i < v.size() && v[i] == '"') {
      ++i;
      bool closed = false;
      while (i < v.size()) {
        char c = v[i++];
        if (c == '"') {
          closed = true;
          break;
        }
        if (c == '\\' && i < v.size()) c = v[i++];
        value += c;
      }
      if (!closed) return std::nullopt;
    } else {
      size_t start = i;
      while (i < v.size() && TokenChar(v[i])) ++i;
      value = std::string(v.substr(start, i - start));
      if (value.empty()) return std::nullopt;
    }
    if (out.params.count(key)) return std::nullopt;  // one meaning: no repeats
    out.params[key] = std::move(value);
    while (i < v.size() && (v[i] == ' ' || v[i] == '\t')) ++i;
    if (i < v.size()) {
      if (v[i] != ';') return std::nullopt;
      ++i;
    }
  }
  return out;
}

// One part's header block (without the blank line) into *part.
Status ParsePartHeaders(std::string_view block, size_t index, MultipartPart* part) {
  const std::string where = "part " + std::to_string(index + 1);
  bool disposition = false;
  while (!block.empty()) {
    size_t eol = block.find("\r\n");
    std::string_view line = block.substr(0, eol);
    block = eol == std::string_view::npos ? std::string_view() : block.substr(eol + 2);
    if (line.empty() || line.front() == ' ' || line.front() == '\t') {
      return Malformed(where + " has a folded or empty header line");
    }
    size_t colon = line.find(':');
    if (colon == std::string_view::npos || colon == 0) {
      return Malformed(where + " has a header line without a name");
    }
    for (char c : line.substr(0, colon)) {
      if (!TokenChar(c)) return Malformed(where + " has a header name that is not a token");
    }
    for (char c : line) {
      if (c == '\r' || c == '\n' || c == '\0') {
        return Malformed(where + " has a control character in a header");
      }
    }
    const std::string name = LowerCopy(line.substr(0, colon));
    const std::string_view value = Trim(line.substr(colon + 1), kHttpSpace);
    if (name == "content-disposition") {
      if (disposition) return Malformed(where + " has two Content-Disposition headers");
      disposition = true;
      auto v = ParseHeaderValue(value);
      if (!v || v->type != "form-data") {
        return Malformed(where + "'s Content-Disposition is not form-data with parameters");
      }
      auto n = v->params.find("name");
      if (n == v->params.end() || n->second.empty()) {
        return Malformed(where + "'s Content-Disposition has no name");
      }
      part->name = n->second;
      if (auto f = v->params.find("filename"); f != v->params.end()) part->filename = f->second;
    } else if (name == "content-type") {
      auto v = ParseHeaderValue(value);
      if (!v || v->type.find('/') == std::string::npos) {
        return Malformed(where + " has a Content-Type that is not type/subtype");
      }
      part->content_type = v->type;
    } else if (name == "content-transfer-encoding") {
      const std::string enc = LowerCopy(value);
      if (enc != "7bit" && enc != "8bit" && enc != "binary") {
        return Malformed(where + " uses Content-Transfer-Encoding " + enc +
                         " (send the bytes as they are)");
      }
    }
  }
  if (!disposition) return Malformed(where + " has no Content-Disposition");
  return Status::Ok();
}

}  // namespace

bool IsMultipartFormData(std::string_view content_type) {
  auto v = ParseHeaderValue(content_type);
  if (v) return v->type == "multipart/form-data";
  return LowerCopy(Trim(content_type.substr(0, content_type.find(';')), kHttpSpace)) ==
         "multipart/form-data";
}

Result<std::string> MultipartBoundary(std::string_view content_type) {
  auto v = ParseHeaderValue(content_type);
  if (!v || v->type != "multipart/form-data") {
    return InvalidArgument("Content-Type must be multipart/form-data; boundary=…", "Content-Type");
  }
  auto b = v->params.find("boundary");
  if (b == v->params.end() || b->second.empty() || b->second.size() > kMaxBoundary ||
      b->second.back() == ' ') {
    return InvalidArgument("multipart/form-data needs a boundary of 1 to 70 characters",
                           "Content-Type");
  }
  return b->second;
}

Result<std::vector<MultipartPart>> ParseMultipart(std::string_view content_type,
                                                  std::string_view body, size_t max_parts) {
  auto boundary = MultipartBoundary(content_type);
  if (!boundary.ok()) return boundary.status();
  const std::string first = "--" + *boundary;
  const std::string delimiter = "\r\n--" + *boundary;
  if (body.substr(0, first.size()) != first) {
    return Malformed("it does not start with the boundary");
  }
  size_t pos = first.size();
  std::vector<MultipartPart> parts;
  for (;;) {
    // After a delimiter: "--" closes the body, CRLF starts a part.
    if (body.substr(pos, 2) == "--") break;
    if (body.substr(pos, 2) != "\r\n") {
      return Malformed("a boundary is not followed by CRLF or --");
    }
    pos += 2;
    if (parts.size() == max_parts) {
      return Malformed("more than " + std::to_string(max_parts) + " parts");
    }
    MultipartPart part;
    std::string_view block;
    if (body.substr(pos, 2) == "\r\n") {  // a part with no headers at all
      pos += 2;
    } else {
      size_t end = body.find("\r\n\r\n", pos);
      if (end == std::string_view::npos || end - pos > kMaxHeaderBytes) {
        return Malformed("part " + std::to_string(parts.size() + 1) +
                         "'s headers do not end within 8 KiB");
      }
      block = body.substr(pos, end - pos);
      pos = end + 4;
    }
    MAESTRO_RETURN_IF_ERROR(ParsePartHeaders(block, parts.size(), &part));
    size_t next = body.find(delimiter, pos);
    if (next == std::string_view::npos) {
      return Malformed("it ends without its closing boundary");
    }
    part.body = body.substr(pos, next - pos);
    parts.push_back(std::move(part));
    pos = next + delimiter.size();
  }
  return parts;
}

}  // namespace maestro::api
