#pragma once

#include <QByteArray>
#include <QJsonValue>
#include <QString>
#include <QStringList>
#include <variant>

// Editing a YAML document as text, so a change written back to the user's config file keeps
// every comment and the formatting of everything it did not change. The parser says where each
// node starts (yaml-cpp's marks); where it ends is read from the indentation of the lines after
// it: a node ends before the first line that is neither blank, nor only a comment, nor indented
// deeper than its key (or its `-`). Comment lines between the end of a node and the next key
// stay where they are: they usually introduce what follows.
namespace switchyard::config {

// A path to a node: map keys, and sequence indexes written as numbers ("routes", "2").
using YamlPath = QStringList;

// What went wrong, in words for the log; the caller falls back to a coarser edit.
using YamlEditResult = std::variant<QByteArray, QString>;

// `text` with the node at `path` replaced by `valueYaml` (the value's own YAML text, written
// from column 0, block or flow). A missing last key is added at the end of its parent map (a
// block map; a flow one is an error) and an index one past the end appends an item. A one-line
// value keeps the comment at the end of its line; the lines of a replaced block value go with it.
YamlEditResult replaceYamlNode(const QByteArray &text, const YamlPath &path,
                               const QByteArray &valueYaml);

// `text` without the top-level key `key` and its value; unchanged when there is no such key.
YamlEditResult removeTopLevelKey(const QByteArray &text, const QString &key);

// The value of the top-level key `key` as it is written in `text`, moved to column 0, with its
// comments and formatting; empty when there is no such key.
QByteArray topLevelValueText(const QByteArray &text, const QString &key);

// The top-level keys of a YAML map document, in file order; empty when it is not a map.
QStringList topLevelKeys(const QByteArray &text);

// Whether two documents hold the same data whatever their comments and formatting; false when
// either does not parse.
bool sameYamlData(const QByteArray &first, const QByteArray &second);
// The same for the value of one top-level key in each (a missing key equals a missing key).
bool sameTopLevelValue(const QByteArray &first, const QByteArray &second, const QString &key);

// JSON as readable block YAML from column 0: maps and lists short enough for one line are
// written in flow style (`{field: model, eq: demo}`), longer ones as blocks; strings are plain
// where YAML reads them back as the same string, else double-quoted. Keys come as a person
// writes them: name, id, priority, when, to, field first, the rest sorted.
QByteArray yamlFromJson(const QJsonValue &value);

// `key: value` as a top-level entry: on one line for a one-line value, else the value's lines
// indented by two spaces under `key:`.
QByteArray topLevelEntry(const QString &key, const QByteArray &valueYaml);

} // namespace switchyard::config
