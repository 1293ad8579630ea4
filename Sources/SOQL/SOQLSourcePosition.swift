/// A place in SOQL text: 1-based row and column, columns counted in Unicode scalars.
public struct SOQLSourcePosition: Sendable, Hashable {
    /// The 1-based line number.
    public var row: Int
    /// The 1-based column within the line.
    public var column: Int

    public init(row: Int, column: Int) {
        self.row = row
        self.column = column
    }
}
