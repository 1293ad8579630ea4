/// A literal value on the right of a SOQL comparison.
public enum SOQLValue: Sendable, Hashable, CustomStringConvertible {
    case null
    case boolean(Bool)
    case integer(Int64)
    /// A number with a fraction; printed without exponent (non-finite values print as `null`).
    case decimal(Double)
    /// The string's value; printing quotes and escapes it with `SOQL.quote`.
    case string(String)
    case date(SOQLDate)
    case dateTime(SOQLDateTime)
    case dateLiteral(SOQLDateLiteral)

    /// The literal as SOQL text.
    public var description: String { SOQLPrinter.value(self) }
}
