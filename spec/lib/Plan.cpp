// Names of the plan vocabulary and the text form of a plan.
#include "purlin/spec/Plan.h"

namespace purlin {

namespace {
const char *const kStepKinds[] = {"stage", "notify", "wait", "consume"};
const char *const kStageModes[] = {"expose", "copy", "push"};
const char *const kPeerSets[] = {"all", "srcs", "dsts", "group", "self"};
const char *const kSelections[] = {"mine", "owned"};
const char *const kSources[] = {"input",   "scratch", "staging",
                                "partial", "output",  "received", "owners"};
const char *const kDests[] = {"self", "all", "partial", "received"};
const char *const kLineFormats[] = {"none", "ll", "ll128"};

template <class E, size_t N>
bool parseName(const char *const (&names)[N], const std::string &s, E &out) {
  for (size_t i = 0; i < N; ++i)
    if (s == names[i]) {
      out = (E)i;
      return true;
    }
  return false;
}
} // namespace

const char *stepKindName(StepKind k) { return kStepKinds[(int)k]; }
const char *stageModeName(StageMode m) { return kStageModes[(int)m]; }
const char *peerSetName(PeerSet p) { return kPeerSets[(int)p]; }
const char *selectionName(Selection s) { return kSelections[(int)s]; }
const char *sourceKindName(SourceKind s) { return kSources[(int)s]; }
const char *destKindName(DestKind d) { return kDests[(int)d]; }
const char *lineFormatName(LineFormat f) { return kLineFormats[(int)f]; }
std::string flaggedWords(LineFormat f, bool parity) {
  if (f == LineFormat::None)
    return "";
  return flaggedWords(f) + (parity ? " parity" : "");
}
std::string flaggedWords(LineFormat f) {
  if (f == LineFormat::None)
    return "";
  return f == LineFormat::LL ? "flagged" : std::string("flagged ") + lineFormatName(f);
}
bool parseStageMode(const std::string &s, StageMode &o) { return parseName(kStageModes, s, o); }
bool parsePeerSet(const std::string &s, PeerSet &o) { return parseName(kPeerSets, s, o); }
bool parseSelection(const std::string &s, Selection &o) { return parseName(kSelections, s, o); }
bool parseSourceKind(const std::string &s, SourceKind &o) { return parseName(kSources, s, o); }
bool parseDestKind(const std::string &s, DestKind &o) { return parseName(kDests, s, o); }
bool parseLineFormat(const std::string &s, LineFormat &o) { return parseName(kLineFormats, s, o); }

const std::vector<std::string> &strategyNames() {
  static const std::vector<std::string> names = {
      "direct", "direct_copy", "two_shot", "two_shot_copy", "staged",
      "staged_ll", "staged_ll128", "direct_unfused", "direct_copy_unfused",
      "two_shot_unfused", "two_shot_gather"};
  return names;
}

std::string strategyList() {
  std::string s;
  for (auto &n : strategyNames())
    s += (s.empty() ? "" : ", ") + n;
  return s;
}

std::string writePlan(const Plan &p) {
  std::string s = "plan " + p.strategy + " lanes " + std::to_string(p.lanes) +
                  " chunks " + std::to_string(p.chunks) + "\n";
  for (size_t i = 0; i < p.signals.size(); ++i)
    s += "  signal " + std::to_string(i) + " " + p.signals[i] + "\n";
  for (auto &st : p.steps) {
    s += std::string(st.chunked ? "  chunk " : "  ") + stepKindName(st.kind) +
         " clause " + std::to_string(st.clause);
    switch (st.kind) {
    case StepKind::Stage:
      s += std::string(" ") + stageModeName(st.stage);
      if (st.flagged())
        s += " " + flaggedWords(st.lines, st.parity);
      break;
    case StepKind::Notify:
    case StepKind::Wait:
      s += " " + p.signals[st.signal] + " " + peerSetName(st.peers);
      if (st.allLanes)
        s += " all_lanes";
      if (st.boundary)
        s += " boundary";
      break;
    case StepKind::Consume:
      s += std::string(" ") + selectionName(st.sel) + " " +
           sourceKindName(st.src) + " " + destKindName(st.dst);
      if (st.ranksLo != 0 || st.ranksHi >= 0)
        s += " ranks " + std::to_string(st.ranksLo) + ".." +
             (st.ranksHi < 0 ? std::string("R") : std::to_string(st.ranksHi));
      if (st.flagged())
        s += " " + flaggedWords(st.lines, st.parity);
      if (st.epilogue)
        s += " epilogue";
      break;
    }
    s += "\n";
  }
  return s;
}

} // namespace purlin
