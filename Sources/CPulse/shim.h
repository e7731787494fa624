#include <pulse/pulseaudio.h>
#include <pulse/simple.h>
