#include "json/json_template.h"

#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QStringList>
#include <map>
#include <vector>

namespace switchyard::json {

using namespace Qt::StringLiterals;

struct RequestTemplate::Node {
    enum class Kind { Literal, Reference, Text, Map, Object, Array };
    Kind kind = Kind::Literal;
    QJsonValue literal; // Literal; the default of a Reference or Text when hasDefault
    bool hasDefault = false;
    JsonPath path;                                 // Reference, Text, and the list of a Map
    std::vector<std::pair<QString, Node>> members; // Object
    std::vector<Node> items;                       // Array; a Map's `to` is items[0]
};

namespace {

using Node = RequestTemplate::Node;
using Location = RequestTemplate::Location;

// What the OpenAI chat request can hold, so references can be checked when the config loads.
// Members of free-form parts (metadata, parameters of a tool...) are Any: anything may be there.
struct Schema {
    enum class Shape { Any, Object, List, Text, Number, Boolean };
    Shape shape = Shape::Any;
    QString noun;                              // "the OpenAI chat request", "a message"...
    std::map<QString, const Schema *> members; // Object, sorted for the list of known names
    const Schema *element = nullptr;           // List
};

QString shapeName(Schema::Shape shape)
{
    switch (shape) {
    case Schema::Shape::Object:
        return u"an object"_s;
    case Schema::Shape::List:
        return u"a list"_s;
    case Schema::Shape::Text:
        return u"a string"_s;
    case Schema::Shape::Number:
        return u"a number"_s;
    case Schema::Shape::Boolean:
        return u"a boolean"_s;
    case Schema::Shape::Any:
        break;
    }
    return u"any value"_s;
}

const Schema &chatRequestSchema()
{
    static const Schema any{Schema::Shape::Any, {}, {}, nullptr};
    static const Schema text{Schema::Shape::Text, {}, {}, nullptr};
    static const Schema number{Schema::Shape::Number, {}, {}, nullptr};
    static const Schema boolean{Schema::Shape::Boolean, {}, {}, nullptr};
    static const Schema function{Schema::Shape::Object,
                                 u"a function"_s,
                                 {{u"name"_s, &text},
                                  {u"description"_s, &text},
                                  {u"parameters"_s, &any},
                                  {u"arguments"_s, &text},
                                  {u"strict"_s, &boolean}},
                                 nullptr};
    static const Schema toolCall{Schema::Shape::Object,
                                 u"a tool call"_s,
                                 {{u"id"_s, &text}, {u"type"_s, &text}, {u"function"_s, &function}},
                                 nullptr};
    static const Schema toolCalls{Schema::Shape::List, {}, {}, &toolCall};
    static const Schema message{Schema::Shape::Object,
                                u"a message"_s,
                                {{u"role"_s, &text},
                                 {u"content"_s, &any},
                                 {u"name"_s, &text},
                                 {u"tool_calls"_s, &toolCalls},
                                 {u"tool_call_id"_s, &text},
                                 {u"function_call"_s, &function},
                                 {u"refusal"_s, &text},
                                 {u"audio"_s, &any}},
                                nullptr};
    static const Schema messages{Schema::Shape::List, {}, {}, &message};
    static const Schema tool{Schema::Shape::Object,
                             u"a tool"_s,
                             {{u"type"_s, &text}, {u"function"_s, &function}},
                             nullptr};
    static const Schema tools{Schema::Shape::List, {}, {}, &tool};
    static const Schema functions{Schema::Shape::List, {}, {}, &function};
    static const Schema request{Schema::Shape::Object,
                                u"the OpenAI chat request"_s,
                                {{u"model"_s, &text},
                                 {u"messages"_s, &messages},
                                 {u"max_tokens"_s, &number},
                                 {u"max_completion_tokens"_s, &number},
                                 {u"temperature"_s, &number},
                                 {u"top_p"_s, &number},
                                 {u"n"_s, &number},
                                 {u"seed"_s, &number},
                                 {u"presence_penalty"_s, &number},
                                 {u"frequency_penalty"_s, &number},
                                 {u"top_logprobs"_s, &number},
                                 {u"stream"_s, &boolean},
                                 {u"logprobs"_s, &boolean},
                                 {u"parallel_tool_calls"_s, &boolean},
                                 {u"store"_s, &boolean},
                                 {u"stop"_s, &any},
                                 {u"logit_bias"_s, &any},
                                 {u"metadata"_s, &any},
                                 {u"response_format"_s, &any},
                                 {u"stream_options"_s, &any},
                                 {u"tool_choice"_s, &any},
                                 {u"function_call"_s, &any},
                                 {u"modalities"_s, &any},
                                 {u"audio"_s, &any},
                                 {u"prediction"_s, &any},
                                 {u"web_search_options"_s, &any},
                                 {u"tools"_s, &tools},
                                 {u"functions"_s, &functions},
                                 {u"user"_s, &text},
                                 {u"service_tier"_s, &text},
                                 {u"reasoning_effort"_s, &text}},
                                nullptr};
    return request;
}

class Compiler {
public:
    QList<RequestTemplate::Error> errors;

    Node compile(const QJsonValue &value, Location &where, const Schema *element)
    {
        if (value.isString())
            return compileString(value.toString(), where, element);
        if (value.isArray()) {
            Node node;
            node.kind = Node::Kind::Array;
            const QJsonArray array = value.toArray();
            for (qsizetype index = 0; index < array.size(); ++index) {
                where.append(index);
                node.items.push_back(compile(array.at(index), where, element));
                where.removeLast();
            }
            return node;
        }
        if (value.isObject()) {
            const QJsonObject object = value.toObject();
            if (object.contains(u"$map"_s))
                return compileMap(object, where, element);
            if (object.contains(u"$text"_s))
                return compileText(object, where, element);
            Node node;
            node.kind = Node::Kind::Object;
            for (auto it = object.constBegin(); it != object.constEnd(); ++it) {
                where.append(it.key());
                if (it.key().startsWith(u"$$"_s)) {
                    node.members.emplace_back(it.key().mid(1), compile(it.value(), where, element));
                } else if (it.key().startsWith(u'$')) {
                    fail(where,
                         u"unknown directive `%1`; a template knows `$map` and `$text` "
                         u"(write `$$` for a member name that starts with `$`)"_s.arg(it.key()));
                } else {
                    node.members.emplace_back(it.key(), compile(it.value(), where, element));
                }
                where.removeLast();
            }
            return node;
        }
        Node node;
        node.literal = value;
        return node;
    }

private:
    void fail(const Location &where, const QString &message) { errors.append({where, message}); }

    static bool looksLikeReference(const QString &text)
    {
        if (text.isEmpty() || (text.front() != u'$' && text.front() != u'@'))
            return false;
        if (text.size() == 1)
            return true;
        const QChar next = text.at(1);
        return next == u'.' || next == u'[' || next == u'|';
    }

    Node compileString(const QString &text, const Location &where, const Schema *element)
    {
        Node node;
        if (text.startsWith(u"$$"_s) || text.startsWith(u"@@"_s)) {
            node.literal = text.mid(1);
            return node;
        }
        if (!looksLikeReference(text)) {
            node.literal = text;
            return node;
        }
        node.kind = Node::Kind::Reference;
        compileReference(text, where, element, node);
        return node;
    }

    // Fills node.path and the default from "PATH" or "PATH|DEFAULT".
    bool compileReference(const QString &text, const Location &where, const Schema *element,
                          Node &node)
    {
        qsizetype consumed = 0;
        auto parsed = JsonPath::parsePrefix(text, &consumed);
        if (const QString *problem = std::get_if<QString>(&parsed)) {
            fail(where, u"reference `%1` is not a valid path: %2"_s.arg(text, *problem));
            return false;
        }
        node.path = std::get<JsonPath>(std::move(parsed));
        if (consumed < text.size()) {
            const QString fallback = text.mid(consumed + 1);
            node.hasDefault = true;
            // A default that is JSON keeps its type (256, true, null, "x"); any other text is
            // taken as a string, so `|anonymous` needs no quotes.
            const QJsonDocument json = QJsonDocument::fromJson("[" + fallback.toUtf8() + "]");
            node.literal = json.isArray() && json.array().size() == 1 ? json.array().at(0)
                                                                      : QJsonValue(fallback);
        }
        return checkPath(node.path, where, element) != nullptr;
    }

    // The schema at the end of `path`, or nullptr after reporting why it can never match.
    const Schema *checkPath(const JsonPath &path, const Location &where, const Schema *element)
    {
        static const Schema any{Schema::Shape::Any, {}, {}, nullptr};
        const Schema *current = &chatRequestSchema();
        if (path.root() == JsonPath::Root::Element) {
            if (!element) {
                fail(where, u"reference `%1` uses `@`, which stands for the element of a `$map`, "
                            u"but it is not inside one"_s.arg(path.text()));
                return nullptr;
            }
            current = element;
        }
        const QList<JsonPath::Step> &steps = path.steps();
        for (qsizetype index = 0; index < steps.size(); ++index) {
            if (current->shape == Schema::Shape::Any)
                return &any;
            const JsonPath::Step &step = steps.at(index);
            const QString reached = path.textOfFirst(index);
            if (step.kind == JsonPath::Step::Kind::Member) {
                if (current->shape == Schema::Shape::List) {
                    fail(where,
                         u"reference `%1` can never match: `%2` is a list; pick an element "
                         u"(`%2[0]`, `%2[-1]`) or map it with `$map`"_s.arg(path.text(), reached));
                    return nullptr;
                }
                if (current->shape != Schema::Shape::Object) {
                    fail(where,
                         u"reference `%1` can never match: `%2` is %3 and has no member "
                         u"`%4`"_s.arg(path.text(), reached, shapeName(current->shape), step.name));
                    return nullptr;
                }
                const auto member = current->members.find(step.name);
                if (member == current->members.end()) {
                    QStringList known;
                    for (const auto &[name, schema] : current->members)
                        known.append(name);
                    fail(where,
                         u"reference `%1` can never match: %2 has no field `%3` (it has %4)"_s.arg(
                             path.text(), current->noun, step.name, known.join(u", "_s)));
                    return nullptr;
                }
                current = member->second;
            } else {
                if (current->shape != Schema::Shape::List) {
                    fail(where, u"reference `%1` can never match: `%2` is %3, not a list"_s.arg(
                                    path.text(), reached, shapeName(current->shape)));
                    return nullptr;
                }
                current = current->element;
            }
        }
        return current;
    }

    // {"$map": "PATH", "to": TEMPLATE}
    Node compileMap(const QJsonObject &object, Location &where, const Schema *element)
    {
        Node node;
        node.kind = Node::Kind::Map;
        for (auto it = object.constBegin(); it != object.constEnd(); ++it) {
            if (it.key() != u"$map"_s && it.key() != u"to"_s) {
                where.append(it.key());
                fail(where, u"unknown key `%1` in a `$map`; it takes `$map` (the list) and `to` "
                            u"(the template for each element)"_s.arg(it.key()));
                where.removeLast();
            }
        }
        where.append(u"$map"_s);
        const QJsonValue source = object.value(u"$map"_s);
        const Schema *listElement = nullptr;
        bool sourceOk = false;
        if (!source.isString()) {
            fail(where, u"`$map` must be a path to a list, such as `$.messages`"_s);
        } else {
            auto parsed = JsonPath::parse(source.toString());
            if (const QString *problem = std::get_if<QString>(&parsed)) {
                fail(where,
                     u"`$map` path `%1` is not valid: %2"_s.arg(source.toString(), *problem));
            } else {
                node.path = std::get<JsonPath>(std::move(parsed));
                if (const Schema *found = checkPath(node.path, where, element)) {
                    sourceOk = true;
                    if (!node.path.picksOne()) {
                        listElement = found; // each match of [*] is one element
                    } else if (found->shape == Schema::Shape::List) {
                        listElement = found->element;
                    } else if (found->shape == Schema::Shape::Any) {
                        listElement = found;
                    } else {
                        fail(where, u"`$map` needs a list, but `%1` is %2"_s.arg(
                                        node.path.text(), shapeName(found->shape)));
                        sourceOk = false;
                    }
                }
            }
        }
        where.removeLast();
        if (!object.contains(u"to"_s)) {
            fail(where, u"`$map` needs `to`, the template for each element"_s);
            return node;
        }
        where.append(u"to"_s);
        static const Schema any{Schema::Shape::Any, {}, {}, nullptr};
        node.items.push_back(compile(object.value(u"to"_s), where, sourceOk ? listElement : &any));
        where.removeLast();
        return node;
    }

    // {"$text": "PATH"} or {"$text": "PATH|DEFAULT"}
    Node compileText(const QJsonObject &object, Location &where, const Schema *element)
    {
        Node node;
        node.kind = Node::Kind::Text;
        if (object.size() != 1) {
            fail(where, u"`$text` stands alone: an object with `$text` may have no other key"_s);
        }
        where.append(u"$text"_s);
        const QJsonValue source = object.value(u"$text"_s);
        if (!source.isString() || !looksLikeReference(source.toString()))
            fail(where, u"`$text` must be a path such as `@.content`"_s);
        else
            compileReference(source.toString(), where, element, node);
        where.removeLast();
        return node;
    }
};

std::optional<QJsonValue> renderNode(const Node &node, const QJsonValue &request,
                                     const QJsonValue &element)
{
    switch (node.kind) {
    case Node::Kind::Literal:
        return node.literal;
    case Node::Kind::Reference: {
        std::optional<QJsonValue> found = node.path.find(request, element);
        if (!found && node.hasDefault)
            return node.literal;
        return found;
    }
    case Node::Kind::Text: {
        const std::optional<QJsonValue> found = node.path.find(request, element);
        if ((!found || found->isNull()) && node.hasDefault)
            return node.literal;
        if (!found)
            return std::nullopt;
        return contentText(*found);
    }
    case Node::Kind::Map: {
        const std::optional<QJsonValue> list = node.path.find(request, element);
        if (!list || !list->isArray())
            return std::nullopt;
        QJsonArray rendered;
        for (const QJsonValue &item : list->toArray()) {
            if (std::optional<QJsonValue> value = renderNode(node.items.front(), request, item))
                rendered.append(*value);
        }
        return rendered;
    }
    case Node::Kind::Object: {
        QJsonObject object;
        for (const auto &[name, member] : node.members) {
            if (std::optional<QJsonValue> value = renderNode(member, request, element))
                object.insert(name, *value);
        }
        return object;
    }
    case Node::Kind::Array: {
        QJsonArray array;
        for (const Node &item : node.items) {
            if (std::optional<QJsonValue> value = renderNode(item, request, element))
                array.append(*value);
        }
        return array;
    }
    }
    return std::nullopt;
}

} // namespace

QString contentText(const QJsonValue &content)
{
    if (content.isString())
        return content.toString();
    if (!content.isArray())
        return {};
    QStringList parts;
    for (const QJsonValue &part : content.toArray()) {
        const QJsonObject object = part.toObject();
        if (object.value(u"type"_s).toString() == u"text"_s)
            parts.append(object.value(u"text"_s).toString());
    }
    return parts.join(u'\n');
}

std::variant<RequestTemplate, QList<RequestTemplate::Error>>
RequestTemplate::compile(const QJsonValue &source)
{
    Compiler compiler;
    Location where;
    if (!source.isObject()) {
        compiler.errors.append({where, u"a request template must be a JSON object"_s});
        return compiler.errors;
    }
    Node root = compiler.compile(source, where, nullptr);
    if (!compiler.errors.isEmpty())
        return compiler.errors;
    RequestTemplate compiled;
    compiled.m_root = std::make_shared<const Node>(std::move(root));
    return compiled;
}

QJsonValue RequestTemplate::render(const QJsonValue &request) const
{
    if (!m_root)
        return QJsonObject();
    return renderNode(*m_root, request, QJsonValue()).value_or(QJsonObject());
}

} // namespace switchyard::json
