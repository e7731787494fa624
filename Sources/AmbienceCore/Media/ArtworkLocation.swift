/// Where a desktop player says an item's cover is (MPRIS `mpris:artUrl`). The engine reads a local picture when
/// the artwork is asked for; it never fetches one from the network (a game that wants it may, on its own terms).
public enum ArtworkLocation: Sendable, Hashable {
    /// A picture file on this machine: the `file://` URL's path, percent-decoded.
    case file(String)
    /// A picture on the network: the `http` or `https` URL as the player gave it.
    case remote(String)
}
