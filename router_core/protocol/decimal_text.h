#pragma once

#include <QByteArray>
#include <QString>
#include <array>
#include <cmath>
#include <type_traits>

namespace switchyard::protocol {

// Appends `value` in decimal to `out` (a QString or a QByteArray) without a temporary:
// QString::number and QByteArray::number each allocate a string that is copied and freed at
// once, several times a request on the hot path (a status line, a length, a trace's details).
template <typename Text>
Text &appendDecimal(Text &out, qint64 value)
{
    static_assert(std::is_same_v<Text, QString> || std::is_same_v<Text, QByteArray>);
    std::array<char, 20> digits{};
    // The magnitude of the most negative value does not fit a qint64: taken one short, then 1.
    quint64 magnitude = value < 0 ? quint64(-(value + 1)) + 1 : quint64(value);
    size_t first = digits.size();
    do {
        digits[--first] = char('0' + magnitude % 10);
        magnitude /= 10;
    } while (magnitude != 0);
    if (value < 0)
        digits[--first] = '-';
    const auto length = qsizetype(digits.size() - first);
    if constexpr (std::is_same_v<Text, QString>)
        out.append(QLatin1StringView(digits.data() + first, length));
    else
        out.append(QByteArrayView(digits.data() + first, length));
    return out;
}

// Appends `value` with one decimal ("236.0"), as QString::number(value, 'f', 1) would for a
// duration in milliseconds, without its general-purpose double formatting: that took 5 µs of
// the first token's relay when it ran cold.
template <typename Text>
Text &appendOneDecimal(Text &out, double value)
{
    static_assert(std::is_same_v<Text, QString> || std::is_same_v<Text, QByteArray>);
    const qint64 tenths = std::llround(value * 10.0);
    const quint64 magnitude = tenths < 0 ? quint64(-(tenths + 1)) + 1 : quint64(tenths);
    std::array<char, 24> text{};
    size_t first = text.size();
    text[--first] = char('0' + magnitude % 10);
    text[--first] = '.';
    quint64 whole = magnitude / 10;
    do {
        text[--first] = char('0' + whole % 10);
        whole /= 10;
    } while (whole != 0);
    if (tenths < 0)
        text[--first] = '-';
    const auto length = qsizetype(text.size() - first);
    if constexpr (std::is_same_v<Text, QString>)
        out.append(QLatin1StringView(text.data() + first, length));
    else
        out.append(QByteArrayView(text.data() + first, length));
    return out;
}

} // namespace switchyard::protocol
