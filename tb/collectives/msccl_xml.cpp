#include "tb/collectives/msccl_xml.h"

#include <algorithm>
#include <charconv>
#include <fstream>
#include <limits>
#include <pugixml.hpp>
#include <sstream>
#include <type_traits>

#include "models/common/error.h"
#include "tb/common/files.h"

namespace wafersim::tb {

namespace msccl = collectives::msccl;

namespace {

// Line numbers of character offsets in the file's text.
class Lines {
 public:
  explicit Lines(const std::string& text) {
    for (size_t i = 0; i < text.size(); ++i)
      if (text[i] == '\n') ends_.push_back(i);
  }
  int of(ptrdiff_t offset) const {
    if (offset < 0) return 0;
    return static_cast<int>(
               std::lower_bound(ends_.begin(), ends_.end(), static_cast<size_t>(offset)) -
               ends_.begin()) +
           1;
  }

 private:
  std::vector<size_t> ends_;
};

class Reader {
 public:
  Reader(std::string path, const Lines& lines) : path_(std::move(path)), lines_(lines) {}

  msccl::Algorithm algo(const pugi::xml_node& e) {
    msccl::Algorithm a;
    a.line = line(e);
    const std::string where = item(e);
    a.name = e.attribute("name").as_string();
    a.proto = e.attribute("proto") ? e.attribute("proto").as_string() : "Simple";
    a.coll = text(e, "coll", where);
    a.ngpus = static_cast<int>(number(e, "ngpus", where, 1, 1 << 20));
    a.nchannels = static_cast<int>(number(e, "nchannels", where, 1, 1 << 20, 1));
    a.nchunksperloop = number(e, "nchunksperloop", where, 1, int64_t{1} << 40);
    a.inplace = number(e, "inplace", where, 0, 1, 0) == 1;
    a.gpus = children(e, "gpu", where, [&](const pugi::xml_node& c) { return gpu(c); });
    return a;
  }

 private:
  msccl::Gpu gpu(const pugi::xml_node& e) {
    msccl::Gpu g;
    g.line = line(e);
    const std::string where = item(e);
    g.id = static_cast<int>(number(e, "id", where, 0, 1 << 20));
    g.i_chunks = number(e, "i_chunks", where, 0, int64_t{1} << 40, 0);
    g.o_chunks = number(e, "o_chunks", where, 0, int64_t{1} << 40, 0);
    g.s_chunks = number(e, "s_chunks", where, 0, int64_t{1} << 40, 0);
    g.tbs = children(e, "tb", where, [&](const pugi::xml_node& c) { return tb(c); });
    return g;
  }

  msccl::ThreadBlock tb(const pugi::xml_node& e) {
    msccl::ThreadBlock t;
    t.line = line(e);
    const std::string where = item(e);
    t.id = static_cast<int>(number(e, "id", where, 0, 1 << 20));
    t.send = static_cast<int>(number(e, "send", where, -1, 1 << 20, -1));
    t.recv = static_cast<int>(number(e, "recv", where, -1, 1 << 20, -1));
    t.chan = static_cast<int>(number(e, "chan", where, 0, 1 << 20, 0));
    t.steps = children(e, "step", where, [&](const pugi::xml_node& c) { return step(c); });
    return t;
  }

  msccl::Step step(const pugi::xml_node& e) {
    msccl::Step s;
    s.line = line(e);
    const std::string where = item(e);
    s.s = static_cast<int>(number(e, "s", where, 0, 1 << 30));
    s.type = text(e, "type", where);
    s.srcbuf = buffer(e, "srcbuf", where);
    s.dstbuf = buffer(e, "dstbuf", where);
    s.srcoff = number(e, "srcoff", where, -1, int64_t{1} << 40, 0);
    s.dstoff = number(e, "dstoff", where, -1, int64_t{1} << 40, 0);
    s.cnt = number(e, "cnt", where, 0, int64_t{1} << 40, s.type == "nop" ? 0 : -2);
    s.depid = static_cast<int>(number(e, "depid", where, -1, 1 << 20, -1));
    s.deps = static_cast<int>(number(e, "deps", where, -1, 1 << 30, -1));
    s.hasdep = number(e, "hasdep", where, 0, 1, 0) == 1;
    return s;
  }

  int line(const pugi::xml_node& e) const { return lines_.of(e.offset_debug()); }
  std::string item(const pugi::xml_node& e) const {
    std::string text = std::string("<") + e.name();
    for (const char* key : {"id", "s", "name"})
      if (e.attribute(key))
        text += std::string(" ") + key + "=\"" + e.attribute(key).value() + "\"";
    return text + "> (line " + std::to_string(line(e)) + ")";
  }
  // The children of `e`, parsed: each must be a <name> element (comments aside).
  template <typename Parse>
  std::vector<std::invoke_result_t<Parse, const pugi::xml_node&>> children(const pugi::xml_node& e,
                                                                           const char* name,
                                                                           const std::string& where,
                                                                           Parse parse) {
    std::vector<std::invoke_result_t<Parse, const pugi::xml_node&>> out;
    for (const pugi::xml_node& c : e.children()) {
      if (c.type() == pugi::node_comment) continue;
      expect(c, name, where);
      out.push_back(parse(c));
    }
    return out;
  }
  void expect(const pugi::xml_node& e, const char* name, const std::string& parent) const {
    if (e.type() == pugi::node_element && std::string(e.name()) == name) return;
    throw InputError(path_, parent,
                     std::string("holds ") +
                         (e.type() == pugi::node_element ? "<" + std::string(e.name()) + ">"
                                                         : std::string("text")) +
                         " (line " + std::to_string(line(e)) + ") where only <" + name +
                         "> elements belong");
  }
  std::string text(const pugi::xml_node& e, const char* key, const std::string& where) const {
    const pugi::xml_attribute a = e.attribute(key);
    if (!a) throw InputError(path_, where, std::string("has no '") + key + "' attribute");
    return a.value();
  }
  char buffer(const pugi::xml_node& e, const char* key, const std::string& where) const {
    const pugi::xml_attribute a = e.attribute(key);
    if (!a) return 'i';
    const std::string v = a.value();
    if (v == "i" || v == "o" || v == "s") return v[0];
    throw InputError(path_, where, std::string(key) + " is '" + v + "', expected i, o or s");
  }
  // An integer attribute in [low, high]; `fallback` when absent (-2: required).
  int64_t number(const pugi::xml_node& e, const char* key, const std::string& where, int64_t low,
                 int64_t high, int64_t fallback = -2) const {
    const pugi::xml_attribute a = e.attribute(key);
    if (!a) {
      if (fallback != -2) return fallback;
      throw InputError(path_, where, std::string("has no '") + key + "' attribute");
    }
    const std::string v = a.value();
    int64_t value = 0;
    auto [end, error] = std::from_chars(v.data(), v.data() + v.size(), value);
    if (error != std::errc() || end != v.data() + v.size() || v.empty())
      throw InputError(path_, where, std::string(key) + " is '" + v + "', expected a whole number");
    if (value < low || value > high)
      throw InputError(path_, where,
                       std::string(key) + " is " + v + ", outside " + std::to_string(low) + ".." +
                           std::to_string(high));
    return value;
  }

  const std::string path_;
  const Lines& lines_;
};

}  // namespace

std::vector<msccl::Algorithm> read_msccl_xml(const std::string& path) {
  check_input_file(path, "MSCCL XML");
  std::ifstream in(path, std::ios::binary);
  std::ostringstream buffer;
  buffer << in.rdbuf();
  const std::string text = buffer.str();
  const Lines lines(text);
  pugi::xml_document doc;
  const pugi::xml_parse_result parsed =
      doc.load_buffer(text.data(), text.size(), pugi::parse_default, pugi::encoding_utf8);
  if (!parsed)
    throw InputError(path, "line " + std::to_string(lines.of(parsed.offset)),
                     std::string("not valid XML: ") + parsed.description());
  Reader reader(path, lines);
  std::vector<msccl::Algorithm> algos;
  for (const pugi::xml_node& e : doc.children()) {
    if (e.type() != pugi::node_element) continue;
    if (std::string(e.name()) != "algo")
      throw InputError(path, "line " + std::to_string(lines.of(e.offset_debug())),
                       "<" + std::string(e.name()) + "> where an <algo> element belongs");
    algos.push_back(reader.algo(e));
  }
  if (algos.empty()) throw InputError(path, "", "holds no <algo> element");
  return algos;
}

namespace {

// An attribute value with XML's five special characters escaped.
std::string escaped(const std::string& text) {
  std::string out;
  for (char c : text) switch (c) {
      case '&':
        out += "&amp;";
        break;
      case '<':
        out += "&lt;";
        break;
      case '>':
        out += "&gt;";
        break;
      case '"':
        out += "&quot;";
        break;
      case '\'':
        out += "&apos;";
        break;
      default:
        out += c;
    }
  return out;
}

}  // namespace

void write_msccl_xml(std::ostream& out, const msccl::Algorithm& a) {
  // Written as text, element by element: synthesized plans hold millions of steps, too many for
  // a document tree in memory.
  out << "<algo name=\"" << escaped(a.name) << "\" proto=\"" << escaped(a.proto)
      << "\" nchannels=\"" << a.nchannels << "\" nchunksperloop=\"" << a.nchunksperloop
      << "\" ngpus=\"" << a.ngpus << "\" coll=\"" << escaped(a.coll) << "\" inplace=\""
      << (a.inplace ? 1 : 0) << "\">\n";
  for (const msccl::Gpu& g : a.gpus) {
    out << "  <gpu id=\"" << g.id << "\" i_chunks=\"" << g.i_chunks << "\" o_chunks=\""
        << g.o_chunks << "\" s_chunks=\"" << g.s_chunks << "\">\n";
    for (const msccl::ThreadBlock& t : g.tbs) {
      out << "    <tb id=\"" << t.id << "\" send=\"" << t.send << "\" recv=\"" << t.recv
          << "\" chan=\"" << t.chan << "\">\n";
      for (const msccl::Step& s : t.steps)
        out << "      <step s=\"" << s.s << "\" type=\"" << escaped(s.type) << "\" srcbuf=\""
            << s.srcbuf << "\" srcoff=\"" << s.srcoff << "\" dstbuf=\"" << s.dstbuf
            << "\" dstoff=\"" << s.dstoff << "\" cnt=\"" << s.cnt << "\" depid=\"" << s.depid
            << "\" deps=\"" << s.deps << "\" hasdep=\"" << (s.hasdep ? 1 : 0) << "\"/>\n";
      out << "    </tb>\n";
    }
    out << "  </gpu>\n";
  }
  out << "</algo>\n";
}

std::string msccl_xml_text(const msccl::Algorithm& a) {
  std::ostringstream out;
  write_msccl_xml(out, a);
  return out.str();
}

}  // namespace wafersim::tb
