extension FormulaFunction {
    /// DATE DATEVALUE DATETIMEVALUE TODAY NOW ADDMONTHS YEAR MONTH DAY WEEKDAY.
    static let dates: [FormulaFunction] = [
        eager("DATE", 3...3, [.number], gives: .date) { arguments, _ in
            guard case .number(let year) = arguments[0], case .number(let month) = arguments[1], case .number(let day) = arguments[2] else { return .blank }
            guard [year, month, day].allSatisfy({ $0.rounded() == $0 && abs($0) < 100_000 }),
                  let days = FormulaCalendar.validDays(year: Int(year), month: Int(month), day: Int(day)) else {
                let parts = [(year, 4), (month, 2), (day, 2)].map { value, width in
                    let text = FormulaNumber.format(value)
                    return String(repeating: "0", count: max(0, width - text.count)) + text
                }
                throw FormulaEvaluationError("DATE: \(parts.joined(separator: "-")) is not a date")
            }
            return .date(days)
        },
        eager("DATEVALUE", 1...1, [.any], gives: .date, check: accepts([.text, .date, .dateTime])) { arguments, _ in
            do throws(FormulaEvaluationError) { return try arguments[0].converted(to: .date) } catch { throw FormulaEvaluationError("DATEVALUE: \(error.message)") }
        },
        eager("DATETIMEVALUE", 1...1, [.any], gives: .dateTime, check: accepts([.text, .date, .dateTime])) { arguments, _ in
            do throws(FormulaEvaluationError) { return try arguments[0].converted(to: .dateTime) } catch { throw FormulaEvaluationError("DATETIMEVALUE: \(error.message)") }
        },
        eager("TODAY", 0...0, [], gives: .date) { _, environment in .date(FormulaCalendar.split(environment.now).days) },
        eager("NOW", 0...0, [], gives: .dateTime) { _, environment in .dateTime(environment.now) },
        FormulaFunction(name: "ADDMONTHS", arity: 2...2, parameters: [.any, .number], result: { $0[0] == .dateTime ? .dateTime : .date },
                        check: accepts([.date, .dateTime]), implementation: .eager(addMonths)),
        eager("YEAR", 1...1, [.date], gives: .number) { arguments, _ in part(arguments[0]) { FormulaCalendar.civil($0).year } },
        eager("MONTH", 1...1, [.date], gives: .number) { arguments, _ in part(arguments[0]) { FormulaCalendar.civil($0).month } },
        eager("DAY", 1...1, [.date], gives: .number) { arguments, _ in part(arguments[0]) { FormulaCalendar.civil($0).day } },
        eager("WEEKDAY", 1...1, [.date], gives: .number) { arguments, _ in part(arguments[0]) { FormulaCalendar.weekday($0) } },
    ]

    private static func part(_ value: FormulaValue, _ body: (Int) -> Int) -> FormulaValue {
        guard case .date(let days) = value else { return .blank }
        return .number(Double(body(days)))
    }

    /// `ADDMONTHS(date, months)`: a text argument is read as a date (or a date/time when it has a time).
    private static let addMonths: Body = { arguments, _ in
        guard case .number(let months) = arguments[1], !arguments[0].isBlank else { return .blank }
        guard abs(months) < 120_000 else { throw FormulaEvaluationError("ADDMONTHS: \(FormulaNumber.format(months)) months is out of range") }
        var start = arguments[0]
        if case .text(let text) = start {
            do throws(FormulaEvaluationError) { start = try start.converted(to: text.count > 10 ? .dateTime : .date) } catch { throw FormulaEvaluationError("ADDMONTHS: \(error.message)") }
        }
        switch start {
        case .date(let days):
            guard let moved = FormulaCalendar.addingMonths(Int(months), to: days) else { throw FormulaEvaluationError("ADDMONTHS: the date leaves the calendar") }
            return .date(moved)
        case .dateTime(let milliseconds):
            let (days, time) = FormulaCalendar.split(milliseconds)
            guard let moved = FormulaCalendar.addingMonths(Int(months), to: days) else { throw FormulaEvaluationError("ADDMONTHS: the date leaves the calendar") }
            return .dateTime(Int64(moved) * FormulaCalendar.millisecondsPerDay + Int64(time))
        default:
            throw FormulaEvaluationError("ADDMONTHS: \(quoted(start.text)) is not a date")
        }
    }
}
