{
  description = "sidespin: a local-first chat server in which a language model uses tools";

  inputs = {
    nixpkgs.url = "github:NixOS/nixpkgs/nixos-unstable";
    flake-utils.url = "github:numtide/flake-utils";
  };

  outputs = { self, nixpkgs, flake-utils }:
    flake-utils.lib.eachDefaultSystem (system:
      let
        pkgs = import nixpkgs { inherit system; };
        python = pkgs.python311;
      in
      {
        # `nix develop`, then `./run` (the web app) or `./run test` (every test).
        # ./run keeps the Python packages in .venv, pinned by pyproject.toml, so the
        # shell only brings the toolchain: Python, a compiler for wheels, Node for
        # npm-packaged MCP servers, and Chromium for the browser tests.
        devShells.default = pkgs.mkShell {
          packages = [
            python
            python.pkgs.pip
            python.pkgs.virtualenv
            pkgs.nodejs_22
            pkgs.chromium
            pkgs.gcc
            pkgs.git
            pkgs.sqlite
          ];
          shellHook = ''
            export PYTHON=${python}/bin/python3
            export SIDESPIN_CHROMIUM=${pkgs.chromium}/bin/chromium
            # manylinux wheels (xllamacpp, playwright) need the C++ runtime at run time
            export LD_LIBRARY_PATH=${pkgs.stdenv.cc.cc.lib}/lib''${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
            echo "sidespin dev shell: ./run starts the server, ./run test runs every test"
          '';
        };
      });
}
