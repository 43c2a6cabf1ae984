#include "config/yaml_text_edit.h"

#include <QJsonArray>
#include <QJsonObject>
#include <QList>
#include <QRegularExpression>
#include <algorithm>
#include <limits>
#include <optional>
#include <string>
#include <yaml-cpp/yaml.h>

namespace switchyard::config {

using namespace Qt::StringLiterals;

namespace {

// The document's lines by byte offset; yaml-cpp's marks count lines and bytes from 0.
class Lines {
public:
    explicit Lines(const QByteArray &text) : m_text(text)
    {
        m_starts.append(0);
        for (qsizetype i = 0; i < text.size(); ++i) {
            if (text[i] == '\n')
                m_starts.append(i + 1);
        }
        if (!text.isEmpty() && text.endsWith('\n'))
            m_starts.removeLast(); // no empty line after the last line end
    }
    int count() const { return int(m_starts.size()); }
    qsizetype start(int line) const { return m_starts[line]; }
    // The end of the line's text, before its line end.
    qsizetype end(int line) const
    {
        qsizetype end = line + 1 < count()      ? m_starts[line + 1] - 1
                        : m_text.endsWith('\n') ? m_text.size() - 1
                                                : m_text.size();
        if (end > start(line) && m_text[end - 1] == '\r')
            --end;
        return end;
    }
    QByteArrayView at(int line) const
    {
        return QByteArrayView(m_text).sliced(start(line), end(line) - start(line));
    }

private:
    const QByteArray &m_text;
    QList<qsizetype> m_starts;
};

int indentOf(QByteArrayView line)
{
    int indent = 0;
    while (indent < line.size() && line[indent] == ' ')
        ++indent;
    return indent;
}

bool isBlankOrComment(QByteArrayView line)
{
    const int indent = indentOf(line);
    return indent == line.size() || line[indent] == '#' || line[indent] == '\t';
}

// Where a comment starts on `line` at or after `from` (outside quotes, after a space), with the
// spaces before it; -1 when there is none.
qsizetype commentStart(QByteArrayView line, qsizetype from)
{
    char quote = 0;
    for (qsizetype i = from; i < line.size(); ++i) {
        const char c = line[i];
        if (quote) {
            if (c == quote)
                quote = 0;
            else if (c == '\\' && quote == '"')
                ++i;
            continue;
        }
        if (c == '"' || c == '\'') {
            quote = c;
        } else if (c == '#' && (i == 0 || line[i - 1] == ' ')) {
            qsizetype start = i;
            while (start > from && line[start - 1] == ' ')
                --start;
            return start;
        }
    }
    return -1;
}

// How a node hangs in its parent.
struct Step {
    YAML::Node node;
    YAML::Node key;    // set when the parent is a map
    bool item = false; // the parent is a sequence
};

// The bytes a node's text takes: [from, to), and its lines.
struct Span {
    qsizetype from = 0;
    qsizetype to = 0;
    int firstLine = 0;
    int lastLine = 0;
    bool onOneLine = true;
    int childColumn = 0; // where the lines of a block value start
    int ownerColumn = 0; // the key's or the dash's column
};

bool validMark(const YAML::Mark &mark)
{
    return mark.line >= 0 && mark.column >= 0;
}

// The last line that still belongs to a node whose owner (key or dash) is at `ownerColumn` on
// `ownerLine`: following lines indented deeper do; for a block sequence written at its key's
// own indentation, its `-` lines do too.
int lastContentLine(const Lines &lines, int ownerLine, int ownerColumn, bool sequenceAtOwnerColumn)
{
    int last = ownerLine;
    for (int line = ownerLine + 1; line < lines.count(); ++line) {
        const QByteArrayView text = lines.at(line);
        if (isBlankOrComment(text))
            continue;
        const int indent = indentOf(text);
        if (indent > ownerColumn ||
            (sequenceAtOwnerColumn && indent == ownerColumn && text[indent] == '-' &&
             (indent + 1 == text.size() || text[indent + 1] == ' '))) {
            last = line;
            continue;
        }
        break;
    }
    return last;
}

// The end of a key's text and its colon on the key's line; -1 when not found.
qsizetype colonEnd(const Lines &lines, const YAML::Mark &keyMark)
{
    const QByteArrayView line = lines.at(keyMark.line);
    qsizetype i = keyMark.column;
    if (i < line.size() && (line[i] == '"' || line[i] == '\'')) {
        const char quote = line[i++];
        while (i < line.size() && line[i] != quote)
            i += line[i] == '\\' && quote == '"' ? 2 : 1;
        ++i;
    }
    for (; i < line.size(); ++i) {
        if (line[i] == ':' && (i + 1 == line.size() || line[i + 1] == ' ' || line[i + 1] == '\t'))
            return lines.start(keyMark.line) + i + 1;
    }
    return -1;
}

std::optional<Span> mapValueSpan(const Lines &lines, const YAML::Node &key, const YAML::Node &value)
{
    const YAML::Mark keyMark = key.Mark();
    if (!validMark(keyMark) || keyMark.line >= lines.count())
        return std::nullopt;
    const qsizetype afterColon = colonEnd(lines, keyMark);
    if (afterColon < 0)
        return std::nullopt;
    const YAML::Mark valueMark = value.Mark();
    const bool onKeyLine = !validMark(valueMark) || valueMark.line == keyMark.line ||
                           (value.IsNull() && valueMark.line > keyMark.line);
    const bool blockSequence = value.IsSequence() && value.Style() != YAML::EmitterStyle::Flow;
    Span span;
    span.ownerColumn = keyMark.column;
    span.from = afterColon;
    span.firstLine = keyMark.line;
    span.lastLine = value.IsNull() && !onKeyLine
                        ? keyMark.line
                        : lastContentLine(lines, keyMark.line, keyMark.column, blockSequence);
    if (value.IsNull())
        span.lastLine = keyMark.line;
    span.onOneLine = span.lastLine == keyMark.line;
    span.to = lines.end(span.lastLine);
    if (span.onOneLine) {
        const qsizetype comment =
            commentStart(lines.at(keyMark.line), afterColon - lines.start(keyMark.line));
        if (comment >= 0)
            span.to = lines.start(keyMark.line) + comment;
    }
    span.childColumn = !onKeyLine ? valueMark.column : keyMark.column + 2;
    return span;
}

std::optional<Span> itemSpan(const Lines &lines, const YAML::Node &item)
{
    const YAML::Mark mark = item.Mark();
    if (!validMark(mark) || mark.line >= lines.count())
        return std::nullopt;
    const QByteArrayView line = lines.at(mark.line);
    qsizetype dash = mark.column - 1;
    while (dash >= 0 && line[dash] == ' ')
        --dash;
    if (dash < 0 || line[dash] != '-')
        return std::nullopt; // an item that starts on the line after its dash
    Span span;
    span.ownerColumn = int(dash);
    span.from = lines.start(mark.line) + mark.column;
    span.firstLine = mark.line;
    span.lastLine = lastContentLine(lines, mark.line, int(dash), false);
    span.onOneLine = span.lastLine == mark.line;
    span.to = lines.end(span.lastLine);
    if (span.onOneLine) {
        const qsizetype comment = commentStart(line, mark.column);
        if (comment >= 0)
            span.to = lines.start(mark.line) + comment;
    }
    span.childColumn = mark.column;
    return span;
}

std::optional<Span> spanOf(const Lines &lines, const Step &step)
{
    if (step.item)
        return itemSpan(lines, step.node);
    return mapValueSpan(lines, step.key, step.node);
}

QByteArray spaces(int count)
{
    return QByteArray(std::max(0, count), ' ');
}

QList<QByteArray> valueLines(const QByteArray &valueYaml)
{
    QByteArray trimmed = valueYaml;
    while (trimmed.endsWith('\n') || trimmed.endsWith('\r'))
        trimmed.chop(1);
    return trimmed.split('\n');
}

bool isOneLine(const QByteArray &valueYaml)
{
    return valueLines(valueYaml).size() == 1;
}

// The value's lines, the first as it is, the others moved right by `column`.
QByteArray indentedTail(const QList<QByteArray> &valueLines, int column)
{
    QByteArray out = valueLines.value(0);
    for (qsizetype i = 1; i < valueLines.size(); ++i) {
        out += '\n';
        if (!valueLines[i].isEmpty())
            out += spaces(column) + valueLines[i];
    }
    return out;
}

QByteArray indentedBlock(const QList<QByteArray> &valueLines, int column)
{
    QByteArray out;
    for (qsizetype i = 0; i < valueLines.size(); ++i) {
        if (i > 0)
            out += '\n';
        if (!valueLines[i].isEmpty())
            out += spaces(column) + valueLines[i];
    }
    return out;
}

std::optional<YAML::Node> parse(const QByteArray &text, QString *error = nullptr)
{
    try {
        return YAML::Load(text.toStdString());
    } catch (const YAML::Exception &exception) {
        if (error)
            *error =
                u"the document does not parse: %1"_s.arg(QString::fromStdString(exception.what()));
        return std::nullopt;
    }
}

bool isIndex(const QString &segment, int *index)
{
    bool ok = false;
    *index = segment.toInt(&ok);
    return ok && *index >= 0;
}

} // namespace

YamlEditResult replaceYamlNode(const QByteArray &text, const YamlPath &path,
                               const QByteArray &valueYaml)
{
    if (path.isEmpty())
        return u"an empty path names the whole document"_s;
    QString error;
    const std::optional<YAML::Node> document = parse(text, &error);
    if (!document)
        return error;
    const Lines lines(text);
    const QList<QByteArray> value = valueLines(valueYaml);
    const bool oneLine = isOneLine(valueYaml);

    QList<Step> steps{{*document, {}, false}};
    for (qsizetype depth = 0; depth < path.size(); ++depth) {
        const YAML::Node parent = steps.constLast().node;
        const QString &segment = path[depth];
        const bool last = depth + 1 == path.size();
        if (parent.IsMap() || (parent.IsNull() && depth == 0)) {
            std::optional<Step> found;
            if (parent.IsMap()) {
                for (auto it = parent.begin(); it != parent.end(); ++it) {
                    if (it->first.IsScalar() &&
                        QString::fromStdString(it->first.Scalar()) == segment) {
                        found = Step{it->second, it->first, false};
                        break;
                    }
                }
            }
            if (found) {
                steps.append(*found);
                continue;
            }
            if (!last)
                return u"`%1` is not in the document"_s.arg(path.mid(0, depth + 1).join(u'.'));
            const QByteArray key = segment.toUtf8();
            if (depth == 0) {
                // A new top-level key goes at the end of the file.
                QByteArray out = text;
                if (!out.isEmpty() && !out.endsWith('\n'))
                    out += '\n';
                out += topLevelEntry(segment, valueYaml);
                return out;
            }
            if (parent.Style() == YAML::EmitterStyle::Flow)
                return u"`%1` is written in flow style; a key cannot be added to it in place"_s.arg(
                    path.mid(0, depth).join(u'.'));
            const std::optional<Span> parentSpan = spanOf(lines, steps.constLast());
            if (!parentSpan || parent.size() == 0)
                return u"cannot find where `%1` ends"_s.arg(path.mid(0, depth).join(u'.'));
            const int column = parent.begin()->first.Mark().column;
            QByteArray entry = '\n' + spaces(column) + key + ':';
            entry += oneLine
                         ? ' ' + value.value(0)
                         : '\n' + indentedBlock(value, value.value(0).startsWith('-') ? column
                                                                                      : column + 2);
            return QByteArray(text).insert(lines.end(parentSpan->lastLine), entry);
        }
        if (parent.IsSequence()) {
            int index = 0;
            if (!isIndex(segment, &index) || index > int(parent.size()))
                return u"`%1` is not an index of `%2`"_s.arg(segment,
                                                             path.mid(0, depth).join(u'.'));
            if (index < int(parent.size())) {
                steps.append({parent[index], {}, true});
                continue;
            }
            if (!last)
                return u"`%1` is not in the document"_s.arg(path.mid(0, depth + 1).join(u'.'));
            if (parent.Style() == YAML::EmitterStyle::Flow || parent.size() == 0)
                return u"`%1` is written in flow style; an item cannot be added to it in place"_s
                    .arg(path.mid(0, depth).join(u'.'));
            const std::optional<Span> lastItem = itemSpan(lines, parent[parent.size() - 1]);
            if (!lastItem)
                return u"cannot find where `%1` ends"_s.arg(path.mid(0, depth).join(u'.'));
            const QByteArray item = '\n' + spaces(lastItem->ownerColumn) + "- " +
                                    indentedTail(value, lastItem->ownerColumn + 2);
            return QByteArray(text).insert(lines.end(lastItem->lastLine), item);
        }
        return u"`%1` is not a map or a list"_s.arg(path.mid(0, depth).join(u'.'));
    }

    const Step &target = steps.constLast();
    const Step &parentStep = steps[steps.size() - 2];
    if (parentStep.node.Style() == YAML::EmitterStyle::Flow && steps.size() > 2)
        return u"`%1` sits in a flow-style collection"_s.arg(path.join(u'.'));
    const std::optional<Span> span = spanOf(lines, target);
    if (!span)
        return u"cannot find where `%1` is written"_s.arg(path.join(u'.'));
    QByteArray replacement;
    if (target.item) {
        replacement = indentedTail(value, span->childColumn);
    } else if (oneLine) {
        replacement = ' ' + value.value(0);
    } else if (span->onOneLine) {
        // A one-line value becomes a block: the comment at the end of its line stays on the
        // key's line, where it still describes the key.
        int column = span->ownerColumn + 2;
        if (value.value(0).startsWith('-'))
            column = span->ownerColumn + 2;
        const qsizetype lineEnd = lines.end(span->lastLine);
        replacement = text.mid(span->to, lineEnd - span->to) + '\n' + indentedBlock(value, column);
        return QByteArray(text).replace(span->from, lineEnd - span->from, replacement);
    } else {
        int column = span->childColumn;
        if (!value.value(0).startsWith('-') && column <= span->ownerColumn)
            column = span->ownerColumn + 2;
        replacement = '\n' + indentedBlock(value, column);
    }
    return QByteArray(text).replace(span->from, span->to - span->from, replacement);
}

YamlEditResult removeTopLevelKey(const QByteArray &text, const QString &key)
{
    QString error;
    const std::optional<YAML::Node> document = parse(text, &error);
    if (!document)
        return error;
    if (!document->IsMap())
        return text;
    const Lines lines(text);
    for (auto it = document->begin(); it != document->end(); ++it) {
        if (!it->first.IsScalar() || QString::fromStdString(it->first.Scalar()) != key)
            continue;
        const std::optional<Span> span = mapValueSpan(lines, it->first, it->second);
        if (!span)
            return u"cannot find where `%1` is written"_s.arg(key);
        const qsizetype from = lines.start(it->first.Mark().line);
        qsizetype to = lines.end(span->lastLine);
        if (to < text.size())
            ++to; // its line end
        return QByteArray(text).remove(from, to - from);
    }
    return text;
}

QByteArray topLevelValueText(const QByteArray &text, const QString &key)
{
    const std::optional<YAML::Node> document = parse(text);
    if (!document || !document->IsMap())
        return {};
    const Lines lines(text);
    for (auto it = document->begin(); it != document->end(); ++it) {
        if (!it->first.IsScalar() || QString::fromStdString(it->first.Scalar()) != key)
            continue;
        const std::optional<Span> span = mapValueSpan(lines, it->first, it->second);
        if (!span)
            return {};
        const QByteArray onKeyLine =
            text.mid(span->from, lines.end(span->firstLine) - span->from).trimmed();
        if (span->onOneLine)
            return text.mid(span->from, span->to - span->from).trimmed();
        if (!onKeyLine.isEmpty() && !onKeyLine.startsWith('#'))
            return text.mid(span->from, span->to - span->from).trimmed(); // flow over lines
        int dedent = std::numeric_limits<int>::max();
        for (int line = span->firstLine + 1; line <= span->lastLine; ++line) {
            if (!isBlankOrComment(lines.at(line)))
                dedent = std::min(dedent, indentOf(lines.at(line)));
        }
        QByteArray out;
        for (int line = span->firstLine + 1; line <= span->lastLine; ++line) {
            const QByteArrayView view = lines.at(line);
            out += view.sliced(std::min<qsizetype>(dedent, indentOf(view))).toByteArray();
            out += '\n';
        }
        return out;
    }
    return {};
}

QStringList topLevelKeys(const QByteArray &text)
{
    QStringList keys;
    const std::optional<YAML::Node> document = parse(text);
    if (!document || !document->IsMap())
        return keys;
    for (auto it = document->begin(); it != document->end(); ++it) {
        if (it->first.IsScalar())
            keys.append(QString::fromStdString(it->first.Scalar()));
    }
    return keys;
}

namespace {

// The data of a node whatever its style (flow or block, quoted or plain): comparing these
// compares what a loader reads.
std::string dump(const YAML::Node &node)
{
    if (!node)
        return "<missing>";
    switch (node.Type()) {
    case YAML::NodeType::Scalar:
        return "s" + std::to_string(node.Scalar().size()) + ":" + node.Scalar();
    case YAML::NodeType::Sequence: {
        std::string out = "[";
        for (const YAML::Node &item : node)
            out += dump(item) + ",";
        return out + "]";
    }
    case YAML::NodeType::Map: {
        std::string out = "{";
        for (auto it = node.begin(); it != node.end(); ++it)
            out += dump(it->first) + "=" + dump(it->second) + ",";
        return out + "}";
    }
    default:
        return "~";
    }
}

} // namespace

bool sameYamlData(const QByteArray &first, const QByteArray &second)
{
    const std::optional<YAML::Node> a = parse(first);
    const std::optional<YAML::Node> b = parse(second);
    return a && b && dump(*a) == dump(*b);
}

bool sameTopLevelValue(const QByteArray &first, const QByteArray &second, const QString &key)
{
    const std::optional<YAML::Node> a = parse(first);
    const std::optional<YAML::Node> b = parse(second);
    if (!a || !b)
        return false;
    const std::string name = key.toStdString();
    const auto value = [&name](const YAML::Node &document) {
        return document.IsMap() && document[name] ? dump(document[name]) : std::string("<missing>");
    };
    return value(*a) == value(*b);
}

// ---- JSON to YAML
// ---------------------------------------------------------------------------------

namespace {

constexpr int kLineWidth = 88;

QByteArray quoted(const QString &text)
{
    QByteArray out = "\"";
    for (const QChar c : text) {
        switch (c.unicode()) {
        case '"':
            out += "\\\"";
            break;
        case '\\':
            out += "\\\\";
            break;
        case '\n':
            out += "\\n";
            break;
        case '\t':
            out += "\\t";
            break;
        case '\r':
            out += "\\r";
            break;
        default:
            if (c.unicode() < 0x20)
                out += "\\u" + QByteArray::number(c.unicode(), 16).rightJustified(4, '0');
            else
                out += QString(c).toUtf8();
        }
    }
    return out + '"';
}

// A string YAML reads back as the same string when written bare, in block and flow context.
bool plainSafe(const QString &text)
{
    static const QRegularExpression safe(u"^[A-Za-z0-9_./$][A-Za-z0-9_ ./$*+=@()-]*$"_s);
    static const QRegularExpression reserved(
        u"^(true|false|yes|no|on|off|y|n|null|~|\\.inf|\\.nan|-?\\.inf)$"_s,
        QRegularExpression::CaseInsensitiveOption);
    if (text.isEmpty() || text.endsWith(u' ') || !safe.match(text).hasMatch() ||
        reserved.match(text).hasMatch())
        return false;
    bool number = false;
    text.toDouble(&number);
    if (number)
        return false;
    text.toLongLong(&number, 0);
    return !number;
}

QByteArray scalar(const QJsonValue &value)
{
    switch (value.type()) {
    case QJsonValue::Bool:
        return value.toBool() ? "true" : "false";
    case QJsonValue::Double: {
        const double number = value.toDouble();
        if (number == double(qint64(number)))
            return QByteArray::number(qint64(number));
        return QByteArray::number(number, 'g', 17);
    }
    case QJsonValue::String:
        return plainSafe(value.toString()) ? value.toString().toUtf8() : quoted(value.toString());
    default:
        return "null";
    }
}

bool isContainer(const QJsonValue &value)
{
    return value.isArray() || value.isObject();
}

int depthOf(const QJsonValue &value)
{
    int deepest = 0;
    if (value.isArray()) {
        for (const QJsonValue &item : value.toArray())
            deepest = std::max(deepest, depthOf(item));
    } else if (value.isObject()) {
        for (const QJsonValue &item : value.toObject())
            deepest = std::max(deepest, depthOf(item));
    } else {
        return 0;
    }
    return deepest + 1;
}

// An object's keys as a person writes them: what names an entry first, then when and where
// (a rule reads `name, priority, when, to`), then the rest in JSON's sorted order.
QStringList orderedKeys(const QJsonObject &object)
{
    static const QStringList first{u"name"_s, u"id"_s, u"priority"_s,
                                   u"when"_s, u"to"_s, u"field"_s};
    QStringList keys;
    for (const QString &key : first) {
        if (object.contains(key))
            keys.append(key);
    }
    for (const QString &key : object.keys()) {
        if (!keys.contains(key))
            keys.append(key);
    }
    return keys;
}

QByteArray flow(const QJsonValue &value)
{
    if (value.isArray()) {
        QList<QByteArray> items;
        for (const QJsonValue &item : value.toArray())
            items.append(flow(item));
        return '[' + items.join(", ") + ']';
    }
    if (value.isObject()) {
        const QJsonObject object = value.toObject();
        QList<QByteArray> items;
        for (const QString &key : orderedKeys(object))
            items.append(scalar(key) + ": " + flow(object.value(key)));
        return '{' + items.join(", ") + '}';
    }
    return scalar(value);
}

// A container as one flow line when it is shallow and fits beside what precedes it.
std::optional<QByteArray> flowIfFits(const QJsonValue &value, int used)
{
    if (!isContainer(value))
        return scalar(value);
    const QByteArray text = flow(value);
    if ((value.isArray() && value.toArray().isEmpty()) ||
        (value.isObject() && value.toObject().isEmpty()))
        return text;
    if (depthOf(value) > 2 || used + text.size() > kLineWidth)
        return std::nullopt;
    return text;
}

void block(const QJsonValue &value, int indent, QByteArray &out);

void blockEntry(const QByteArray &lead, const QJsonValue &value, int indent, bool mayFlow,
                QByteArray &out)
{
    if (mayFlow || !isContainer(value)) {
        if (const auto line = flowIfFits(value, indent + int(lead.size()))) {
            out += spaces(indent) + lead + *line + '\n';
            return;
        }
    }
    if (lead.endsWith("- ")) {
        // An item that is a block: its first line goes beside the dash.
        QByteArray inner;
        block(value, indent + 2, inner);
        out += spaces(indent) + lead + inner.mid(indent + 2);
        return;
    }
    out += spaces(indent) + lead.trimmed() + '\n';
    block(value, indent + 2, out);
}

void block(const QJsonValue &value, int indent, QByteArray &out)
{
    if (value.isArray()) {
        for (const QJsonValue &item : value.toArray())
            blockEntry("- ", item, indent, indent >= 2, out);
    } else if (value.isObject()) {
        const QJsonObject object = value.toObject();
        for (const QString &key : orderedKeys(object))
            blockEntry(scalar(key) + ": ", object.value(key), indent, true, out);
    } else {
        out += spaces(indent) + scalar(value) + '\n';
    }
}

} // namespace

QByteArray yamlFromJson(const QJsonValue &value)
{
    if (!isContainer(value) || (value.isArray() && value.toArray().isEmpty()) ||
        (value.isObject() && value.toObject().isEmpty()))
        return flow(value) + '\n';
    QByteArray out;
    block(value, 0, out);
    return out;
}

QByteArray topLevelEntry(const QString &key, const QByteArray &valueYaml)
{
    const QList<QByteArray> value = valueLines(valueYaml);
    if (value.size() == 1)
        return key.toUtf8() + ": " + value[0] + '\n';
    return key.toUtf8() + ":\n" + indentedBlock(value, 2) + '\n';
}

} // namespace switchyard::config
