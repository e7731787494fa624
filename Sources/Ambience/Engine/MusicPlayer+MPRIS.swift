// The engine puts its music player on the desktop: the conformance lives here, above both Music/ and Desktop/, so
// that neither needs the other.
extension MusicPlayer: MPRISPlayerControls {}
