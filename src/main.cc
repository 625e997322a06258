// ksched: the daemon with the in-tree plugins (src/app/app.cc holds the wiring).
#include <ksched/app.h>

int main(int argc, char** argv) { return ksched::app::run(argc, argv); }
