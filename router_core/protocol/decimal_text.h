#pragma once

#include <QByteArray>
#include <QByteArrayView>
#include <QString>
#include <array>
#include <cmath>
#include <type_traits>

namespace switchyard::protocol {

namespace detail {

// Writes the decimal digits of `magnitude` backwards, ending just before `end`; returns the first.
inline char *writeDigitsBefore(char *end, quint64 magnitude)
{
    do {
        *--end = char('0' + magnitude % 10);
        magnitude /= 10;
    } while (magnitude != 0);
    return end;
}

// The magnitude of a qint64: the most negative value's does not fit one, so it is taken one
// short, then 1.
inline quint64 magnitudeOf(qint64 value)
{
    return value < 0 ? quint64(-(value + 1)) + 1 : quint64(value);
}

template <typename Text>
Text &appendAscii(Text &out, const char *first, const char *end)
{
    static_assert(std::is_same_v<Text, QString> || std::is_same_v<Text, QByteArray>);
    const auto length = qsizetype(end - first);
    if constexpr (std::is_same_v<Text, QString>)
        out.append(QLatin1StringView(first, length));
    else
        out.append(QByteArrayView(first, length));
    return out;
}

} // namespace detail

// The decimal digits of `value`, written at the end of `buffer` and viewed there: for text built
// in place, where even an append is one call too many.
inline QByteArrayView decimalDigits(std::array<char, 20> &buffer, quint64 value)
{
    char *const end = buffer.data() + buffer.size();
    return QByteArrayView(detail::writeDigitsBefore(end, value), end);
}

// Appends `value` in decimal to `out` (a QString or a QByteArray) without a temporary:
// QString::number and QByteArray::number each allocate a string that is copied and freed at
// once, several times a request on the hot path (a status line, a length, a trace's details).
template <typename Text>
Text &appendDecimal(Text &out, qint64 value)
{
    std::array<char, 20> text{};
    char *const end = text.data() + text.size();
    char *first = detail::writeDigitsBefore(end, detail::magnitudeOf(value));
    if (value < 0)
        *--first = '-';
    return detail::appendAscii(out, first, end);
}

// Appends `value` with one decimal ("236.0"), as QString::number(value, 'f', 1) would for a
// duration in milliseconds, without its general-purpose double formatting: that took 5 µs of
// the first token's relay when it ran cold.
template <typename Text>
Text &appendOneDecimal(Text &out, double value)
{
    const qint64 tenths = std::llround(value * 10.0);
    const quint64 magnitude = detail::magnitudeOf(tenths);
    std::array<char, 24> text{};
    char *const end = text.data() + text.size();
    char *first = end;
    *--first = char('0' + magnitude % 10);
    *--first = '.';
    first = detail::writeDigitsBefore(first, magnitude / 10);
    if (tenths < 0)
        *--first = '-'; // -0.5 is "-0.5": the whole part alone would lose the sign
    return detail::appendAscii(out, first, end);
}

} // namespace switchyard::protocol
