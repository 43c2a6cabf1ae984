#include "routing/rule_matcher.h"

#include "config/glob_pattern.h"

#include <cmath>

namespace switchyard::routing {

using namespace Qt::StringLiterals;
using config::ConditionOperator;
using config::RouteCondition;

CompiledCondition CompiledCondition::compile(const RouteCondition &condition)
{
    CompiledCondition compiled;
    compiled.m_kind = condition.kind;
    if (condition.kind != RouteCondition::Kind::Compare) {
        QStringList parts;
        for (const RouteCondition &child : condition.children) {
            compiled.m_children.append(compile(child));
            parts.append(compiled.m_children.last().text());
        }
        switch (condition.kind) {
        case RouteCondition::Kind::All:
            compiled.m_text = u"all of ("_s + parts.join(u", "_s) + u')';
            break;
        case RouteCondition::Kind::Any:
            compiled.m_text = u"any of ("_s + parts.join(u", "_s) + u')';
            break;
        default:
            compiled.m_text = u"not ("_s + parts.join(u", "_s) + u')';
            break;
        }
        return compiled;
    }
    if (const std::optional<config::FieldRef> field = config::parseField(condition.field)) {
        compiled.m_field = *field;
        compiled.m_fieldValid = true;
        compiled.m_headerName = field->name.toLatin1();
    }
    compiled.m_op = condition.op;
    compiled.m_values = condition.values;
    compiled.m_value = condition.values.value(0);
    compiled.m_number = compiled.m_value.toDouble(&compiled.m_numberValid);
    compiled.m_numberValid = compiled.m_numberValid && std::isfinite(compiled.m_number);
    compiled.m_mustExist = compiled.m_value != u"false"_s;
    compiled.m_valueUtf8 = compiled.m_value.toUtf8();
    for (const QString &value : condition.values)
        compiled.m_valuesUtf8.append(value.toUtf8());
    if (condition.op == ConditionOperator::Regex) {
        // A regex must match the whole value, as in Envoy and Prometheus: a rule for tenant
        // `acme` must not catch `not-acme`. Write `.*acme.*` to search.
        compiled.m_regex.setPattern(QRegularExpression::anchoredPattern(compiled.m_value));
        compiled.m_regex.optimize();
    }
    const QString shownValue = condition.op == ConditionOperator::In
                                   ? u'[' + condition.values.join(u", "_s) + u']'
                                   : compiled.m_value;
    compiled.m_text =
        condition.field + u' ' + config::operatorName(condition.op) + u' ' + shownValue;
    return compiled;
}

const QByteArray *CompiledCondition::headerValue(const RequestContext &context) const
{
    for (const auto &[name, value] : context.headers) {
        if (name.size() == m_headerName.size() &&
            name.compare(m_headerName, Qt::CaseInsensitive) == 0)
            return &value;
    }
    return nullptr;
}

std::optional<QStringView> CompiledCondition::fieldText(const RequestContext &context,
                                                        QString &scratch) const
{
    const QString *text = nullptr;
    switch (m_field.kind) {
    case config::FieldRef::Kind::Model:
        return QStringView(context.model);
    case config::FieldRef::Kind::Tenant:
        text = &context.tenant;
        break;
    case config::FieldRef::Kind::User:
        text = &context.user;
        break;
    case config::FieldRef::Kind::Task:
        text = &context.task;
        break;
    case config::FieldRef::Kind::Sensitivity:
        text = &context.sensitivity;
        break;
    case config::FieldRef::Kind::Priority:
        text = &context.priority;
        break;
    case config::FieldRef::Kind::TokensInput:
        scratch = QString::number(context.estimatedInputTokens);
        return QStringView(scratch);
    case config::FieldRef::Kind::Header: {
        const QByteArray *value = headerValue(context);
        if (!value)
            return std::nullopt;
        scratch = QString::fromUtf8(QByteArrayView(*value).trimmed());
        return QStringView(scratch);
    }
    case config::FieldRef::Kind::Meta: {
        const auto found = context.meta.constFind(m_field.name);
        if (found == context.meta.cend())
            return std::nullopt;
        return QStringView(*found);
    }
    }
    // The metadata headers: an empty value is the same as an absent one.
    if (text->isEmpty())
        return std::nullopt;
    return QStringView(*text);
}

bool CompiledCondition::compareHeaderBytes(const RequestContext &context) const
{
    // Equality on a header needs no text: compare the bytes as sent with the value's UTF-8.
    const QByteArray *header = headerValue(context);
    const QByteArrayView value = header ? QByteArrayView(*header).trimmed() : QByteArrayView();
    switch (m_op) {
    case ConditionOperator::Exists:
        return (header != nullptr) == m_mustExist;
    case ConditionOperator::Eq:
        return header && value == QByteArrayView(m_valueUtf8);
    case ConditionOperator::Ne:
        return !header || value != QByteArrayView(m_valueUtf8);
    default:
        for (const QByteArray &candidate : m_valuesUtf8) {
            if (header && value == QByteArrayView(candidate))
                return true;
        }
        return false;
    }
}

bool CompiledCondition::compare(const RequestContext &context) const
{
    if (!m_fieldValid)
        return false;
    if (m_field.kind == config::FieldRef::Kind::Header &&
        (m_op == ConditionOperator::Exists || m_op == ConditionOperator::Eq ||
         m_op == ConditionOperator::Ne || m_op == ConditionOperator::In))
        return compareHeaderBytes(context);
    // tokens.input is a number already: compare it without making text of it.
    if (m_field.kind == config::FieldRef::Kind::TokensInput && m_numberValid) {
        const double tokens = context.estimatedInputTokens;
        switch (m_op) {
        case ConditionOperator::Eq:
            return tokens == m_number;
        case ConditionOperator::Ne:
            return tokens != m_number;
        case ConditionOperator::Lt:
            return tokens < m_number;
        case ConditionOperator::Le:
            return tokens <= m_number;
        case ConditionOperator::Gt:
            return tokens > m_number;
        case ConditionOperator::Ge:
            return tokens >= m_number;
        default:
            break;
        }
    }
    QString scratch;
    const std::optional<QStringView> value = fieldText(context, scratch);
    switch (m_op) {
    case ConditionOperator::Exists:
        return value.has_value() == m_mustExist;
    case ConditionOperator::Ne:
        // A request without the field is not equal to the value.
        return !value || *value != m_value;
    default:
        break;
    }
    if (!value)
        return false;
    switch (m_op) {
    case ConditionOperator::Eq:
        return *value == m_value;
    case ConditionOperator::In:
        return m_values.contains(*value);
    case ConditionOperator::Glob:
        return config::globMatches(m_value, *value);
    case ConditionOperator::Regex:
        return m_regex.isValid() && m_regex.match(*value).hasMatch();
    case ConditionOperator::Lt:
    case ConditionOperator::Le:
    case ConditionOperator::Gt:
    case ConditionOperator::Ge: {
        bool parsed = false;
        const double number = value->toDouble(&parsed);
        if (!parsed || !m_numberValid)
            return false; // a value that is not a number is neither less nor greater
        if (m_op == ConditionOperator::Lt)
            return number < m_number;
        if (m_op == ConditionOperator::Le)
            return number <= m_number;
        if (m_op == ConditionOperator::Gt)
            return number > m_number;
        return number >= m_number;
    }
    default:
        return false;
    }
}

bool CompiledCondition::matches(const RequestContext &context) const
{
    switch (m_kind) {
    case RouteCondition::Kind::Compare:
        return compare(context);
    case RouteCondition::Kind::All:
        for (const CompiledCondition &child : m_children) {
            if (!child.matches(context))
                return false;
        }
        return true;
    case RouteCondition::Kind::Any:
        for (const CompiledCondition &child : m_children) {
            if (child.matches(context))
                return true;
        }
        return false;
    case RouteCondition::Kind::Not:
        return !m_children.isEmpty() && !m_children.first().matches(context);
    }
    return false;
}

} // namespace switchyard::routing
