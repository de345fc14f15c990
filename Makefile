# Convenience wrappers around scripts/ (the README's commands work without make).
.PHONY: all build demo test clean
all: build
build:
	bash scripts/build.sh
demo:
	bash scripts/demo.sh
test:
	bash scripts/test.sh
clean:
	rm -rf build
