/// The right-hand side of a comparison.
public enum SOQLOperand: Sendable, Hashable, CustomStringConvertible {
    /// One value, for `= != < <= > >= LIKE`.
    case value(SOQLValue)
    /// A parenthesised list, for `IN`, `NOT IN`, `INCLUDES`, `EXCLUDES`.
    case list([SOQLValue])
    /// A semi-join (`IN`) or anti-join (`NOT IN`) subquery selecting one field.
    indirect case subquery(SOQLQuery)

    /// The operand as SOQL text.
    public var description: String { SOQLPrinter.operand(self) }
}
