#pragma once

#include <QJsonValue>
#include <QList>
#include <QString>
#include <QStringView>
#include <optional>
#include <variant>

namespace switchyard::json {

// A path into a JSON value, in a small subset of JSONPath that mapped providers use to say where
// things are (docs/adapters.md, "Paths"):
//   $             the whole document        @             the element a `$map` is at
//   .name         a member                  ["odd key"]   a member whose name is not a plain word
//   [2]           an element                [-1]          an element counted from the end
//   [*]           every element; the path then names a list of all matches
class JsonPath {
public:
    enum class Root { Document, Element };

    struct Step {
        enum class Kind { Member, Index, Every };
        Kind kind = Kind::Member;
        QString name;  // Member
        int index = 0; // Index; negative counts from the end
    };

    // Parses all of `text`. On failure, returns a message that names the character at fault.
    static std::variant<JsonPath, QString> parse(QStringView text);
    // Parses a path at the start of `text` that ends at the end or at the first `|` outside
    // brackets, as in a template reference "$.max_tokens|256". `consumed` is where it ended.
    static std::variant<JsonPath, QString> parsePrefix(QStringView text, qsizetype *consumed);

    Root root() const { return m_root; }
    const QList<Step> &steps() const { return m_steps; }
    // False when the path has a [*] and so names a list of matches rather than one value.
    bool picksOne() const;
    const QString &text() const { return m_text; }
    // The path's text up to and including step `count` ("$.messages" for count 1).
    QString textOfFirst(qsizetype count) const;

    // The value at the path, std::nullopt when there is none. `element` is what `@` stands for.
    // A path with [*] always finds a list, empty when nothing matched.
    std::optional<QJsonValue> find(const QJsonValue &document,
                                   const QJsonValue &element = QJsonValue()) const;

private:
    void collect(const QJsonValue &value, qsizetype step, QList<QJsonValue> &matches) const;

    Root m_root = Root::Document;
    QList<Step> m_steps;
    QList<qsizetype> m_stepEnds; // end offset of each step in m_text, for textOfFirst
    QString m_text;
};

} // namespace switchyard::json
