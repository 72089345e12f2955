#!/bin/sh
echo setup
echo ours
