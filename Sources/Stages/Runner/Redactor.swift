/// Replaces secret values (tokens, passwords, keys) with `********` in any text bound for a log, a
/// report or an error message.
public struct Redactor: Sendable {
    private let secrets: [String]

    /// Secrets shorter than 4 characters are ignored: masking them would garble ordinary text.
    public init(secrets: [String]) {
        self.secrets = secrets.filter { $0.count >= 4 }.sorted { $0.count > $1.count }
    }

    /// `text` with every secret masked.
    public func redact(_ text: String) -> String {
        var output = text
        for secret in secrets where output.contains(secret) {
            output = output.replacingOccurrences(of: secret, with: "********")
        }
        return output
    }
}
