/// The org emulator: an HTTP server speaking the Salesforce REST API over SQLite (SPEC §7).
///
/// It depends only on `SOQL`, `JSON` and SQLite, never on `Stages` or `Connectors`, so it can ship
/// as a testing product of its own.
public enum OrgEmulator {
    /// The API versions the emulator serves, newest last.
    public static let apiVersions = ["58.0", "59.0", "60.0", "61.0", "62.0"]
}
