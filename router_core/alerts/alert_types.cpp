#include "alerts/alert_types.h"

namespace switchyard::alerts {

using namespace Qt::StringLiterals;

QLatin1StringView subjectKindName(SubjectKind kind)
{
    switch (kind) {
    case SubjectKind::Tier:
        return "tier"_L1;
    case SubjectKind::Budget:
        return "budget"_L1;
    case SubjectKind::Gateway:
        return "gateway"_L1;
    }
    return "tier"_L1;
}

QLatin1StringView valueUnitName(ValueUnit unit)
{
    switch (unit) {
    case ValueUnit::Ratio:
        return "ratio"_L1;
    case ValueUnit::Milliseconds:
        return "ms"_L1;
    case ValueUnit::Answers:
        return "answers"_L1;
    }
    return "ratio"_L1;
}

QLatin1StringView eventKindName(AlertEvent::Kind kind)
{
    return kind == AlertEvent::Kind::Raised ? "raised"_L1 : "cleared"_L1;
}

} // namespace switchyard::alerts
