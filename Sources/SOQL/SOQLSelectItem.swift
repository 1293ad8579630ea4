/// One entry of a select list.
public enum SOQLSelectItem: Sendable, Hashable, CustomStringConvertible {
    /// A field, possibly of a parent: `Account.Name`.
    case field(SOQLFieldPath)
    /// `toLabel(Industry)`: a picklist field's value translated to its label, under the field's name.
    case label(SOQLFieldPath)
    /// `COUNT()`: the result is the number of rows, in `totalSize`.
    case count
    /// An aggregate function: `COUNT(Id)`, `SUM(Amount) total`.
    case aggregate(SOQLAggregate)
    /// A parent-to-child subquery, its `FROM` naming the child relationship: `(SELECT LastName FROM Contacts)`.
    indirect case subquery(SOQLQuery)

    /// The field a `.field` or `.label` item reads, under whose name its value is returned.
    public var fieldPath: SOQLFieldPath? {
        switch self {
        case .field(let path), .label(let path): return path
        case .count, .aggregate, .subquery: return nil
        }
    }

    /// The item as SOQL text.
    public var description: String { SOQLPrinter.selectItem(self) }
}
