import Foundation

/// The sample org shipped with the package (`samples/org/seed.json`): its seed and the user and
/// connected app it declares.
public enum SampleOrg {
    /// The seed file, found from this checkout.
    public static let seedPath: String = URL(fileURLWithPath: #filePath)
        .deletingLastPathComponent()  // OrgEmulatorTesting
        .deletingLastPathComponent()  // Sources
        .deletingLastPathComponent()  // package root
        .appendingPathComponent("samples/org/seed.json").path

    public static let username = "demo@syncpipeline.dev"
    public static let password = "demo-password"
    public static let clientId = "demo-client"
    public static let clientSecret = "demo-secret"
    public static let refreshToken = "demo-refresh-token"
}
