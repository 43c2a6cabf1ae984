#pragma once

#include "json/json_path.h"
#include <QJsonValue>
#include <QList>
#include <QString>
#include <memory>
#include <variant>

namespace switchyard::json {

// A JSON body built from a template with references into the incoming OpenAI chat request
// (docs/adapters.md, "Request templates"). Every JSON value stands for itself except:
//   "$.path" or "@.path"        the value at the path; the member is left out when there is none
//   "$.path|default"            the same, with a default (JSON, or else taken as text)
//   {"$map": "$.path", "to": T} a list with T rendered once per element, `@` being the element
//   {"$text": "@.content"}      message content as plain text: text parts joined by newlines
//   "$$..." / "@@..."           a literal text that starts with one `$` or `@`
// A string is a reference only when `$` or `@` is followed by `.`, `[`, `|` or nothing, so
// "$5 a call" and "@home" are plain text.
class RequestTemplate {
public:
    // Where in the template an error is: member names and list positions from its root.
    using Location = QList<std::variant<QString, qsizetype>>;
    struct Error {
        Location where;
        QString message;
    };

    // Checks the template whole: reference syntax, and that every `$` reference names a field
    // the OpenAI chat request can have (so a typo is a config error, not a missing value at
    // run time). `@` references are checked against the elements of their `$map`'s list.
    static std::variant<RequestTemplate, QList<Error>> compile(const QJsonValue &source);

    // Renders the template against a request. Never fails: a reference with nothing to find and
    // no default leaves its member out.
    QJsonValue render(const QJsonValue &request) const;

    struct Node;

private:
    std::shared_ptr<const Node> m_root; // immutable, shared by every copy of the config
};

// Content of an OpenAI message as plain text: a string as is, the text parts of a list joined
// by newlines, anything else empty.
QString contentText(const QJsonValue &content);

} // namespace switchyard::json
