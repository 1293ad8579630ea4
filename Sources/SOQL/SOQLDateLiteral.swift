/// A relative date literal such as `TODAY` or `LAST_N_DAYS:30`, resolved in UTC against a given "now".
///
/// Weeks start on Sunday and quarters are calendar quarters (no fiscal year), as in an org with the
/// default locale and fiscal settings.
public enum SOQLDateLiteral: Sendable, Hashable, CustomStringConvertible {
    case today, yesterday, tomorrow
    case lastWeek, thisWeek, nextWeek
    case lastMonth, thisMonth, nextMonth
    case last90Days, next90Days
    case lastQuarter, thisQuarter, nextQuarter
    case lastYear, thisYear, nextYear
    case lastNDays(Int), nextNDays(Int), nDaysAgo(Int)
    case lastNWeeks(Int), nextNWeeks(Int)
    case lastNMonths(Int), nextNMonths(Int)
    case lastNYears(Int), nextNYears(Int)

    /// The literals that take no `:n`.
    static let unparameterized: [SOQLDateLiteral] = [
        .today, .yesterday, .tomorrow, .lastWeek, .thisWeek, .nextWeek, .lastMonth, .thisMonth, .nextMonth,
        .last90Days, .next90Days, .lastQuarter, .thisQuarter, .nextQuarter, .lastYear, .thisYear, .nextYear,
    ]

    /// Arguments beyond this are treated as this, keeping instants inside `Int64`.
    static let largestArgument = 1_000_000

    /// "Now" is clamped to years 0000–9999, keeping instants inside `Int64`.
    static let nowBounds: ClosedRange<Int64> = -62_167_219_200_000...253_402_300_799_999

    /// The literal with this (upper-case) name, and its `:n` argument when it takes one.
    init?(name: String, argument: Int?) {
        guard let argument else {
            guard let literal = Self.unparameterized.first(where: { $0.name == name }) else { return nil }
            self = literal
            return
        }
        switch name {
        case "LAST_N_DAYS": self = .lastNDays(argument)
        case "NEXT_N_DAYS": self = .nextNDays(argument)
        case "N_DAYS_AGO": self = .nDaysAgo(argument)
        case "LAST_N_WEEKS": self = .lastNWeeks(argument)
        case "NEXT_N_WEEKS": self = .nextNWeeks(argument)
        case "LAST_N_MONTHS": self = .lastNMonths(argument)
        case "NEXT_N_MONTHS": self = .nextNMonths(argument)
        case "LAST_N_YEARS": self = .lastNYears(argument)
        case "NEXT_N_YEARS": self = .nextNYears(argument)
        default: return nil
        }
    }

    /// The keyword, without the argument.
    public var name: String {
        switch self {
        case .today: return "TODAY"
        case .yesterday: return "YESTERDAY"
        case .tomorrow: return "TOMORROW"
        case .lastWeek: return "LAST_WEEK"
        case .thisWeek: return "THIS_WEEK"
        case .nextWeek: return "NEXT_WEEK"
        case .lastMonth: return "LAST_MONTH"
        case .thisMonth: return "THIS_MONTH"
        case .nextMonth: return "NEXT_MONTH"
        case .last90Days: return "LAST_90_DAYS"
        case .next90Days: return "NEXT_90_DAYS"
        case .lastQuarter: return "LAST_QUARTER"
        case .thisQuarter: return "THIS_QUARTER"
        case .nextQuarter: return "NEXT_QUARTER"
        case .lastYear: return "LAST_YEAR"
        case .thisYear: return "THIS_YEAR"
        case .nextYear: return "NEXT_YEAR"
        case .lastNDays: return "LAST_N_DAYS"
        case .nextNDays: return "NEXT_N_DAYS"
        case .nDaysAgo: return "N_DAYS_AGO"
        case .lastNWeeks: return "LAST_N_WEEKS"
        case .nextNWeeks: return "NEXT_N_WEEKS"
        case .lastNMonths: return "LAST_N_MONTHS"
        case .nextNMonths: return "NEXT_N_MONTHS"
        case .lastNYears: return "LAST_N_YEARS"
        case .nextNYears: return "NEXT_N_YEARS"
        }
    }

    /// The `n` of `LAST_N_DAYS:n` and friends.
    public var argument: Int? {
        switch self {
        case .lastNDays(let n), .nextNDays(let n), .nDaysAgo(let n), .lastNWeeks(let n), .nextNWeeks(let n),
            .lastNMonths(let n), .nextNMonths(let n), .lastNYears(let n), .nextNYears(let n):
            return n
        default:
            return nil
        }
    }

    /// `TODAY`, `LAST_N_DAYS:30`.
    public var description: String { argument.map { "\(name):\($0)" } ?? name }

    /// The instants the literal covers, in epoch milliseconds, at `now` (epoch milliseconds, UTC).
    ///
    /// `LAST_N_DAYS:n` runs from n days before today through the end of today; `NEXT_N_DAYS:n` from
    /// tomorrow for n days; `LAST_N_WEEKS/MONTHS/YEARS:n` are the n whole units before the current one and
    /// `NEXT_…:n` the n whole units after it.
    public func range(now: Int64) -> Range<Int64> {
        let clampedNow = min(max(now, Self.nowBounds.lowerBound), Self.nowBounds.upperBound)
        let today = SOQLCalendar.dayNumber(ofInstant: clampedNow)
        let week = SOQLCalendar.weekStart(ofDayNumber: today)
        let month = SOQLCalendar.monthIndex(ofDayNumber: today)
        let quarter = month - (month % 12) % 3
        let year = month - month % 12
        let n = Int64(min(max(argument ?? 0, 0), Self.largestArgument))
        switch self {
        case .today: return Self.days(today, today + 1)
        case .yesterday: return Self.days(today - 1, today)
        case .tomorrow: return Self.days(today + 1, today + 2)
        case .lastWeek: return Self.days(week - 7, week)
        case .thisWeek: return Self.days(week, week + 7)
        case .nextWeek: return Self.days(week + 7, week + 14)
        case .lastMonth: return Self.months(month - 1, month)
        case .thisMonth: return Self.months(month, month + 1)
        case .nextMonth: return Self.months(month + 1, month + 2)
        case .last90Days: return Self.days(today - 90, today + 1)
        case .next90Days: return Self.days(today + 1, today + 91)
        case .lastQuarter: return Self.months(quarter - 3, quarter)
        case .thisQuarter: return Self.months(quarter, quarter + 3)
        case .nextQuarter: return Self.months(quarter + 3, quarter + 6)
        case .lastYear: return Self.months(year - 12, year)
        case .thisYear: return Self.months(year, year + 12)
        case .nextYear: return Self.months(year + 12, year + 24)
        case .lastNDays: return Self.days(today - n, today + 1)
        case .nextNDays: return Self.days(today + 1, today + 1 + n)
        case .nDaysAgo: return Self.days(today - n, today - n + 1)
        case .lastNWeeks: return Self.days(week - 7 * n, week)
        case .nextNWeeks: return Self.days(week + 7, week + 7 + 7 * n)
        case .lastNMonths: return Self.months(month - n, month)
        case .nextNMonths: return Self.months(month + 1, month + 1 + n)
        case .lastNYears: return Self.months(year - 12 * n, year)
        case .nextNYears: return Self.months(year + 12, year + 12 + 12 * n)
        }
    }

    private static func days(_ first: Int64, _ end: Int64) -> Range<Int64> {
        first * SOQLCalendar.millisecondsPerDay..<end * SOQLCalendar.millisecondsPerDay
    }

    private static func months(_ first: Int64, _ end: Int64) -> Range<Int64> {
        days(SOQLCalendar.dayNumber(ofMonthIndex: first), SOQLCalendar.dayNumber(ofMonthIndex: end))
    }
}
