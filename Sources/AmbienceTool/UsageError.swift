/// A usage mistake: the command prints it with the subcommand's usage and exits 2.
public struct UsageError: Error, CustomStringConvertible {
    public var description: String
    init(_ description: String) { self.description = description }
}
