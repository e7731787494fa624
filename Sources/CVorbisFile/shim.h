#define OV_EXCLUDE_STATIC_CALLBACKS 1
#include <ogg/ogg.h>
#include <vorbis/codec.h>
#include <vorbis/vorbisfile.h>
