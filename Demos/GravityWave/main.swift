import Glibc
// gravity-wave: the Ambience demo game. Everything but the start lives in GravityWaveCore.
import GravityWaveCore

exit(GravityWaveApp.main(arguments: Array(CommandLine.arguments.dropFirst())))
