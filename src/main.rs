fn main() {
    std::process::exit(evalspec::run(std::env::args_os()));
}
