"""Hardware simulation and native-module stand-ins (only under ``--gpu``)."""
