#pragma once

#include "config/routing_config.h"
#include "config/rule_validation.h"
#include "routing/request_context.h"

#include <QByteArray>
#include <QList>
#include <QRegularExpression>
#include <QString>
#include <QStringList>
#include <optional>

namespace switchyard::routing {

// A rule's `when`, prepared once per config snapshot: fields resolved, numbers parsed, regexes
// compiled. Matching allocates nothing for the common fields.
class CompiledCondition {
public:
    CompiledCondition() = default;
    // The condition must have passed config::validateRule; anything it would reject never matches.
    static CompiledCondition compile(const config::RouteCondition &condition);

    bool matches(const RequestContext &context) const;
    // The condition as one line of text, for the decision's reason: "sensitivity eq high".
    const QString &text() const { return m_text; }

private:
    // The field's text, or nothing when the request does not carry it. `scratch` holds text that
    // had to be made (a header value, a number); plain fields are viewed where they are.
    std::optional<QStringView> fieldText(const RequestContext &context, QString &scratch) const;
    const QByteArray *headerValue(const RequestContext &context) const;
    bool compareHeaderBytes(const RequestContext &context) const;
    bool compare(const RequestContext &context) const;

    config::RouteCondition::Kind m_kind = config::RouteCondition::Kind::Compare;
    config::FieldRef m_field;
    QByteArray m_headerName; // Header fields: the name, lower-cased
    bool m_fieldValid = false;
    config::ConditionOperator m_op = config::ConditionOperator::Eq;
    QString m_value;
    QStringList m_values;
    QByteArray m_valueUtf8; // for comparing header bytes without decoding them
    QList<QByteArray> m_valuesUtf8;
    double m_number = 0.0;
    bool m_numberValid = false;
    bool m_mustExist = true;
    QRegularExpression m_regex;
    QList<CompiledCondition> m_children;
    QString m_text;
};

} // namespace switchyard::routing
