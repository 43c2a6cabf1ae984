#include "health/endpoint_state.h"

namespace switchyard {

QString simulatorModeName(SimulatorKnobs::Mode mode)
{
    switch (mode) {
    case SimulatorKnobs::Mode::Ok:
        return QStringLiteral("ok");
    case SimulatorKnobs::Mode::ServerError:
        return QStringLiteral("500");
    case SimulatorKnobs::Mode::RateLimited:
        return QStringLiteral("429");
    case SimulatorKnobs::Mode::Hang:
        return QStringLiteral("hang");
    case SimulatorKnobs::Mode::Reset:
        return QStringLiteral("reset");
    case SimulatorKnobs::Mode::CutStream:
        return QStringLiteral("cut-stream");
    }
    return {};
}

std::optional<SimulatorKnobs::Mode> simulatorModeFromName(const QString &name)
{
    using Mode = SimulatorKnobs::Mode;
    for (Mode mode : {Mode::Ok, Mode::ServerError, Mode::RateLimited, Mode::Hang, Mode::Reset,
                      Mode::CutStream}) {
        if (simulatorModeName(mode) == name)
            return mode;
    }
    return std::nullopt;
}

} // namespace switchyard
