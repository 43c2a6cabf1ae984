#include "json/json_path.h"

#include <QJsonArray>
#include <QJsonObject>

namespace switchyard::json {

using namespace Qt::StringLiterals;

namespace {

bool isNameCharacter(QChar c)
{
    return (c >= u'a' && c <= u'z') || (c >= u'A' && c <= u'Z') || (c >= u'0' && c <= u'9') ||
           c == u'_' || c == u'-';
}

QString at(qsizetype position)
{
    return u"character %1"_s.arg(position + 1);
}

} // namespace

std::variant<JsonPath, QString> JsonPath::parse(QStringView text)
{
    qsizetype consumed = 0;
    auto parsed = parsePrefix(text, &consumed);
    if (std::holds_alternative<QString>(parsed))
        return parsed;
    if (consumed != text.size())
        return u"unexpected `|` at %1; a path ends at its last name or bracket"_s.arg(at(consumed));
    return parsed;
}

std::variant<JsonPath, QString> JsonPath::parsePrefix(QStringView text, qsizetype *consumed)
{
    JsonPath path;
    if (text.isEmpty())
        return u"a path must start with `$` (the document) or `@` (the `$map` element)"_s;
    if (text.front() == u'$')
        path.m_root = Root::Document;
    else if (text.front() == u'@')
        path.m_root = Root::Element;
    else
        return u"a path must start with `$` (the document) or `@` (the `$map` element), got "
               u"`%1`"_s.arg(text.front());

    qsizetype position = 1;
    while (position < text.size()) {
        const QChar c = text[position];
        Step step;
        if (c == u'|') {
            break;
        } else if (c == u'.') {
            const qsizetype start = ++position;
            while (position < text.size() && isNameCharacter(text[position]))
                ++position;
            if (position == start) {
                return u"expected a member name after `.` at %1 (letters, digits, `_`, `-`; "
                       u"use [\"...\"] for other names)"_s.arg(at(start));
            }
            step.kind = Step::Kind::Member;
            step.name = text.sliced(start, position - start).toString();
        } else if (c == u'[') {
            ++position;
            if (position >= text.size())
                return u"unclosed `[` at %1"_s.arg(at(position - 1));
            const QChar first = text[position];
            if (first == u'*') {
                step.kind = Step::Kind::Every;
                ++position;
            } else if (first == u'"' || first == u'\'') {
                ++position;
                QString name;
                bool closed = false;
                while (position < text.size()) {
                    const QChar d = text[position++];
                    if (d == u'\\' && position < text.size()) {
                        name.append(text[position++]);
                    } else if (d == first) {
                        closed = true;
                        break;
                    } else {
                        name.append(d);
                    }
                }
                if (!closed)
                    return u"unclosed quoted name in `[...]`"_s;
                step.kind = Step::Kind::Member;
                step.name = name;
            } else if (first == u'-' || first.isDigit()) {
                const qsizetype start = position;
                ++position;
                while (position < text.size() && text[position].isDigit())
                    ++position;
                bool parsed = false;
                const int index = text.sliced(start, position - start).toInt(&parsed);
                if (!parsed)
                    return u"expected an index in `[...]` at %1"_s.arg(at(start));
                step.kind = Step::Kind::Index;
                step.index = index;
            } else {
                return u"expected an index, `*` or a quoted name in `[...]` at %1"_s.arg(
                    at(position));
            }
            if (position >= text.size() || text[position] != u']')
                return u"expected `]` at %1"_s.arg(at(position));
            ++position;
        } else {
            return u"unexpected `%1` at %2; expected `.name` or `[...]`"_s.arg(c).arg(at(position));
        }
        path.m_steps.append(std::move(step));
        path.m_stepEnds.append(position);
    }
    *consumed = position;
    path.m_text = text.first(position).toString();
    return path;
}

bool JsonPath::picksOne() const
{
    for (const Step &step : m_steps) {
        if (step.kind == Step::Kind::Every)
            return false;
    }
    return true;
}

QString JsonPath::textOfFirst(qsizetype count) const
{
    if (count <= 0)
        return m_text.left(1);
    return m_text.left(m_stepEnds.at(std::min(count, m_stepEnds.size()) - 1));
}

std::optional<QJsonValue> JsonPath::find(const QJsonValue &document,
                                         const QJsonValue &element) const
{
    const QJsonValue &start = m_root == Root::Document ? document : element;
    if (!picksOne()) {
        QList<QJsonValue> matches;
        collect(start, 0, matches);
        QJsonArray list;
        for (const QJsonValue &match : std::as_const(matches))
            list.append(match);
        return list;
    }
    QJsonValue current = start;
    for (const Step &step : m_steps) {
        if (step.kind == Step::Kind::Member) {
            if (!current.isObject())
                return std::nullopt;
            const QJsonObject object = current.toObject();
            const auto member = object.constFind(step.name);
            if (member == object.constEnd())
                return std::nullopt;
            current = member.value();
        } else {
            if (!current.isArray())
                return std::nullopt;
            const QJsonArray array = current.toArray();
            const qsizetype index = step.index < 0 ? array.size() + step.index : step.index;
            if (index < 0 || index >= array.size())
                return std::nullopt;
            current = array.at(index);
        }
    }
    return current;
}

void JsonPath::collect(const QJsonValue &value, qsizetype stepIndex,
                       QList<QJsonValue> &matches) const
{
    if (stepIndex == m_steps.size()) {
        matches.append(value);
        return;
    }
    const Step &step = m_steps.at(stepIndex);
    switch (step.kind) {
    case Step::Kind::Member: {
        if (!value.isObject())
            return;
        const QJsonObject object = value.toObject();
        const auto member = object.constFind(step.name);
        if (member != object.constEnd())
            collect(member.value(), stepIndex + 1, matches);
        return;
    }
    case Step::Kind::Index: {
        if (!value.isArray())
            return;
        const QJsonArray array = value.toArray();
        const qsizetype index = step.index < 0 ? array.size() + step.index : step.index;
        if (index >= 0 && index < array.size())
            collect(array.at(index), stepIndex + 1, matches);
        return;
    }
    case Step::Kind::Every:
        if (!value.isArray())
            return;
        for (const QJsonValue &item : value.toArray())
            collect(item, stepIndex + 1, matches);
        return;
    }
}

} // namespace switchyard::json
