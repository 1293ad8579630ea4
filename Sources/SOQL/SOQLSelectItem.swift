/// One entry of a select list.
public enum SOQLSelectItem: Sendable, Hashable, CustomStringConvertible {
    /// A field, possibly of a parent: `Account.Name`.
    case field(SOQLFieldPath)
    /// `COUNT()`: the result is the number of rows, in `totalSize`.
    case count
    /// An aggregate function: `COUNT(Id)`, `SUM(Amount) total`.
    case aggregate(SOQLAggregate)
    /// A parent-to-child subquery, its `FROM` naming the child relationship: `(SELECT LastName FROM Contacts)`.
    indirect case subquery(SOQLQuery)

    /// The item as SOQL text.
    public var description: String { SOQLPrinter.selectItem(self) }
}
